import FoundationEssentials
import Glibc
import LedgerCore

/// The newest head this device has seen its store commit, kept outside LMDB
/// (`LEDGER/store-head`, beside `store/`), so a store that went back in time
/// is refused instead of read as intact.
///
/// LMDB keeps two meta pages and opens the one with the higher transaction
/// id: rewrite that id (or copy an older `data.mdb` into place) and the
/// store opens one commit (or a month) earlier, every chain link intact, and
/// `verify` has nothing to object to. The file is one line
/// (`Schemas/ledger-format.md` § The store's head file):
///
///     jqc-store-head-v1 POSITION(20 digits) CHAIN-HASH(64 hex) CHECK(16 hex)
///
/// It is written after each commit that appended (by the process that
/// committed, in place, without an fsync: the commit itself was fsynced, and
/// a head file left behind by a crash is allowed). Opening a store reads the
/// file first, then the store: a store whose head is behind the file, or
/// whose record at the file's position has another chain hash, is
/// `LedgerError.rolledBack`. A file that is missing, or fails its check
/// value (a torn write), says nothing and is rewritten by the next commit.
public struct StoreHead: Equatable, Sendable {
    public var head: LedgerDigest

    public init(_ head: LedgerDigest) { self.head = head }

    static let tag = "jqc-store-head-v1"

    /// The file's path for the store in `storeDirectory`, when that store is
    /// a ledger's (`LEDGER/store` with `LEDGER/config.json` beside it); nil
    /// for a store opened on its own (a test's, a scratch copy).
    public static func path(forStore storeDirectory: String) -> String? {
        let store = storeDirectory.hasSuffix("/") ? String(storeDirectory.dropLast()) : storeDirectory
        guard PathText.lastComponent(store) == LedgerLayout.store else { return nil }
        let ledger = PathText.parent(store)
        let base = ledger.isEmpty ? "." : ledger
        guard FileManager.default.fileExists(atPath: base + "/" + LedgerLayout.config) else { return nil }
        return base + "/" + LedgerLayout.storeHead
    }

    /// The line written to the file.
    public var line: String {
        let digits = String(head.position)
        let body = "\(Self.tag) \(String(repeating: "0", count: max(0, 20 - digits.count)))\(digits) \(head.head.hex)"
        return body + " " + Self.check(body) + "\n"
    }

    static func check(_ body: String) -> String {
        String(SHA256Hasher().digest(Array(body.utf8)).hex.prefix(16))
    }

    /// Reads a head file's text; nil when it is not one whole, checked line.
    public init?(line text: String) {
        let fields = Self.trimmingNewlines(text).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 4, fields[0] == Self.tag, fields[1].count == 20,
            let position = UInt64(fields[1]), let hash = Digest256(hex: String(fields[2])),
            Self.check(fields[0...2].joined(separator: " ")) == fields[3]
        else { return nil }
        head = LedgerDigest(position: position, head: hash)
    }

    /// `text` without the line breaks at either end: the scalars of
    /// Foundation's `CharacterSet.newlines` (U+000A to U+000D, U+0085,
    /// U+2028, U+2029), trimmed here because building that set cost a
    /// quarter of a millisecond at every open.
    static func trimmingNewlines(_ text: String) -> Substring {
        func isNewline(_ scalar: Unicode.Scalar) -> Bool {
            (0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85 || scalar.value == 0x2028
                || scalar.value == 0x2029
        }
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, isNewline(first) { scalars.removeFirst() }
        while let last = scalars.last, isNewline(last) { scalars.removeLast() }
        return Substring(scalars)
    }

    /// The head recorded at `path`, if the file holds a whole, checked line.
    public static func read(_ path: String) -> StoreHead? {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 256 else { return nil }
        return StoreHead(line: String(decoding: data, as: UTF8.self))
    }

    /// Writes the head to `path` in place (one `pwrite` of a fixed-length
    /// line, no fsync; see the type's notes). A failure is not the commit's:
    /// the store is durable and a head file that is behind is allowed.
    public func record(at path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Durably writes the head to `path` (a backup's own head file, written
    /// once: renamed into place and fsynced).
    public func recordDurably(at path: String) throws(DurableFileError) {
        try DurableFile.write(Data(line.utf8), to: path, mode: 0o600)
    }

    /// Checks the store's committed state against the recorded head: throws
    /// `LedgerError.rolledBack` when the store is older than it, or holds
    /// another record at its position. `storeHead` is the store's newest
    /// record; `storedHash` answers the chain hash the store has at a position.
    func check(
        storeHead: LedgerDigest, storedHash: (UInt64) throws -> Digest256?, store: String, file: String
    ) throws {
        if head.position > storeHead.position {
            throw LedgerError.rolledBack(
                path: store, headFile: file, recorded: head, found: storeHead, replaced: false)
        }
        guard head.position > 0 else { return }
        if try storedHash(head.position) != head.head {
            throw LedgerError.rolledBack(
                path: store, headFile: file, recorded: head, found: storeHead, replaced: true)
        }
    }
}
