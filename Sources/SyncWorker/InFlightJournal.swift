import FoundationEssentials
import Glibc
import InspectionDomain
import LedgerStore
import Synchronization

/// The records whose creation may have reached the server without this
/// device learning of it: exactly-once without the server's help.
///
/// A server that honours `Idempotency-Key` (or `client_id`) answers a second
/// send with the first record; the reference backend has neither, so a lost
/// answer, a timeout or a `kill -9` between its commit and the outcome's
/// event would make a second record. So before each `POST /inspections` or
/// `POST /issues` the item is written here (one line, appended), and it stays
/// until the server gives a clear answer. An item found here, or whose
/// previous send in this run got no complete answer, is *ambiguous*: before
/// an inspection is sent again the worker looks it up on the server and
/// adopts the id it finds; an issue cannot be looked up (nothing lists
/// issues), so it is sent again and, unless the answer is a replay, flagged
/// as possibly on the server twice (`IssueAccepted.sentAgainAfterLostAnswer`).
/// An item is written here only right before its request, so a run stopped
/// earlier never makes it look sent.
///
/// The file is appended without `fsync`: it must survive the process (a
/// crash, `kill -9`), which the page cache does; after a power loss an item
/// may be missing from it, and then only the server's own guards remain.
/// A missing or unreadable file means nothing is ambiguous; a stale entry
/// costs one look-up, never a wrong answer.
final class InFlightJournal: Sendable {
    let path: String?
    private let items: Mutex<Set<SyncItem>>

    /// Reads the entries a previous run left; `nil` keeps everything in memory (tests, library callers).
    init(path: String?) throws(JournalError) {
        self.path = path
        var found: Set<SyncItem> = []
        if let path, FileManager.default.fileExists(atPath: path) {
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw .cannotRead(path, "\(error)")
            }
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                // A line cut short by a crash names nothing; the rest still count.
                guard words.count == 2, let kind = SyncItemKind(rawValue: String(words[0])),
                    let id = UUID(uuidString: String(words[1]))
                else { continue }
                found.insert(SyncItem(kind: kind, id: id))
            }
        }
        items = Mutex(found)
    }

    /// Whether `item` may already exist on the server.
    func isAmbiguous(_ item: SyncItem) -> Bool { items.withLock { $0.contains(item) } }

    /// Notes `item` as about to be sent, in memory (under the run's lock);
    /// answers whether the note is new, and so must be written (`write`)
    /// before the request goes out.
    func note(_ item: SyncItem) -> Bool { items.withLock { $0.insert(item).inserted } }

    /// Notes `item` as about to be sent; throws when the note cannot be kept,
    /// since sending without it could make a second record after a crash.
    func willSend(_ item: SyncItem) throws(JournalError) {
        guard note(item) else { return }
        try write(item)
    }

    /// Appends the note of `item` to the file (with the run's lock let go).
    func write(_ item: SyncItem) throws(JournalError) {
        guard let path else { return }
        let line = "\(item.kind.rawValue) \(item.id.lowercased)\n"
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw .cannotWrite(path, "it cannot be created") }
        }
        do {
            let handle = try OpenFile(appendingTo: path)
            defer { try? handle.close() }  // a failed close after a completed write loses nothing
            try handle.write(line)
        } catch {
            throw .cannotWrite(path, "\(error)")
        }
    }

    /// The server answered clearly (created, found, or refused): `item` is no longer ambiguous.
    func settled(_ item: SyncItem) {
        items.withLock { _ = $0.remove(item) }
    }

    /// Rewrites the file with what is still ambiguous (at the end of a run).
    func save() throws(JournalError) {
        guard let path else { return }
        let remaining = items.withLock { $0 }
        if remaining.isEmpty {
            if unlink(path) != 0 && errno != ENOENT { throw .cannotWrite(path, String(cString: strerror(errno))) }
            return
        }
        let text = remaining.map { "\($0.kind.rawValue) \($0.id.lowercased)\n" }.sorted().joined()
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .cannotWrite(path, "\(error)")
        }
    }

    /// Why the journal could not be kept.
    enum JournalError: Error, CustomStringConvertible {
        case cannotRead(String, String)
        case cannotWrite(String, String)

        var description: String {
            switch self {
            case .cannotRead(let path, let why):
                "The sync's in-flight journal \(path) cannot be read (\(why)), so nothing was sent: it says which "
                    + "records may already be on the server. Make it readable; remove it only if the server honours "
                    + "Idempotency-Key."
            case .cannotWrite(let path, let why):
                "The sync's in-flight journal \(path) could not be written (\(why)), so nothing was sent: without "
                    + "it a crash could make a second record on the server. Check that the ledger directory is "
                    + "writable and the disk is not full."
            }
        }
    }
}
