import CCrypto
import FoundationEssentials
import Synchronization

/// A SHA-256 digest: 32 bytes.
///
/// Held inline (four words in byte order), not in an array: a record decoded
/// in a scan carries one (its back-link) and every chain check makes two, and
/// an array was an allocation each.
public struct Digest256: Hashable, Sendable, CustomStringConvertible {
    private var words: (UInt64, UInt64, UInt64, UInt64)

    /// The 32 bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The all-zero value that stands before the first record of a chain.
    public static let zero = Digest256(words: (0, 0, 0, 0))

    private init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// The 32 bytes at the start of `raw`, which holds at least that many.
    init(loading raw: UnsafeRawBufferPointer) {
        words = (
            raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
            raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
            raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        )
    }

    /// Accepts exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self = bytes.withUnsafeBytes { Digest256(loading: $0) }
    }

    /// Parses 64 hexadecimal digits.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex), bytes.count == 32 else { return nil }
        self.init(bytes: bytes)
    }

    /// The 32 bytes at `offset` of `span`, if it holds that many there.
    public init?(_ span: RawSpan, at offset: Int = 0) {
        guard offset >= 0, span.byteCount - offset >= 32 else { return nil }
        self = span.withUnsafeBytes { raw in Digest256(loading: UnsafeRawBufferPointer(rebasing: raw[offset...])) }
    }

    /// Whether the 32 bytes at `offset` of `span` are this digest, compared
    /// in place.
    public func isStored(in span: RawSpan, at offset: Int = 0) -> Bool {
        guard let stored = Digest256(span, at: offset) else { return false }
        return stored == self
    }

    /// Lends the 32 bytes to `body` (the hashing code in this module).
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = words
        return try Swift.withUnsafeBytes(of: &copy) { try body($0) }
    }

    /// Whether this digest's 32 bytes come before `other`'s, byte by byte
    /// (the order of the map of stream heads' paths), with no array made.
    func bytesPrecede(_ other: Digest256) -> Bool {
        let a = (
            UInt64(bigEndian: words.0), UInt64(bigEndian: words.1), UInt64(bigEndian: words.2),
            UInt64(bigEndian: words.3)
        )
        let b = (
            UInt64(bigEndian: other.words.0), UInt64(bigEndian: other.words.1), UInt64(bigEndian: other.words.2),
            UInt64(bigEndian: other.words.3)
        )
        return a < b
    }

    public static func == (a: Digest256, b: Digest256) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
}

/// OpenSSL's SHA-256 implementation, fetched once per process.
///
/// A fetch searches the provider store under its lock: it cost about 2.5 µs
/// per hasher in a durable commit, more than hashing the record. A fetched
/// `EVP_MD` is never changed after the fetch and OpenSSL lets threads share
/// it (each with its own `EVP_MD_CTX`). It lives as long as the process; a
/// `Mutex` hands it to each new hasher (once per hasher, never per digest).
private enum FetchedSHA256 {
    private static let fetched = Mutex<OpaquePointer?>(nil)

    static var algorithm: OpaquePointer {
        fetched.withLock { algorithm in
            if let algorithm { return algorithm }
            // Fails only when OpenSSL's default provider is missing, which no
            // caller can handle.
            guard let fetched = LibCrypto.functions.mdFetch(nil, "SHA256", nil) else {
                preconditionFailure("OpenSSL has no SHA256 implementation (default provider missing)")
            }
            algorithm = fetched
            return fetched
        }
    }
}

/// SHA-256 through OpenSSL's libcrypto.
///
/// One hasher keeps one state and reuses it for every digest, because
/// allocating one per record would cost more than hashing a small record.
/// A hasher is not thread-safe; give each thread its own.
public final class SHA256Hasher {
    /// How a hasher reaches SHA-256: the library's own SHA-256 functions
    /// when it has them, else the envelope interface with the fetched
    /// algorithm (`LibCrypto.sha256` says why the first).
    private enum Engine {
        /// `SHA256_Init`, `_Update` and `_Final` on `state`.
        case direct(LibCrypto.SHA256Functions, state: UnsafeMutablePointer<SHA256_CTX>)
        /// `EVP_DigestInit_ex2`, `_Update` and `_Final_ex` on `context`.
        case envelope(
            context: OpaquePointer, algorithm: OpaquePointer, initialise: ccrypto_EVP_DigestInit_ex2,
            update: ccrypto_EVP_DigestUpdate, finish: ccrypto_EVP_DigestFinal_ex)
    }

    private let engine: Engine

    public convenience init() {
        self.init(envelope: false)
    }

    /// With `envelope`, the envelope interface even when the library has
    /// SHA-256's own functions (the tests hold the two to the same digests).
    init(envelope: Bool) {
        let crypto = LibCrypto.functions
        if !envelope, let functions = crypto.sha256 {
            let state = UnsafeMutablePointer<SHA256_CTX>.allocate(capacity: 1)
            state.initialize(to: SHA256_CTX())
            engine = .direct(functions, state: state)
            return
        }
        // Fails only when the process is out of memory, which no caller can handle.
        guard let context = crypto.mdContextNew() else {
            preconditionFailure("EVP_MD_CTX_new failed: out of memory")
        }
        engine = .envelope(
            context: context, algorithm: FetchedSHA256.algorithm, initialise: crypto.digestInit,
            update: crypto.digestUpdate, finish: crypto.digestFinal)
    }

    deinit {
        switch engine {
        case .direct(_, let state): state.deallocate()
        case .envelope(let context, _, _, _, _): LibCrypto.functions.mdContextFree(context)
        }
    }

    /// Whether this hasher uses the library's own SHA-256 functions.
    var isDirect: Bool {
        if case .direct = engine { return true }
        return false
    }

    /// SHA-256 of the concatenation of `parts`.
    public func digest(_ parts: [UInt8]...) -> Digest256 {
        digest(parts: parts)
    }

    public func digest(parts: [[UInt8]]) -> Digest256 {
        start()
        for part in parts {
            part.withUnsafeBytes { raw in update(raw) }
        }
        return finish()
    }

    /// SHA-256(a ‖ b) of two digests (a chain link), without building the
    /// concatenation.
    public func digest(_ a: Digest256, _ b: Digest256) -> Digest256 {
        start()
        a.withUnsafeBytes { update($0) }
        b.withUnsafeBytes { update($0) }
        return finish()
    }

    /// Starts a digest of bytes that arrive in parts (a file read in
    /// chunks): `begin`, then `add` for each part, then `end`. Another
    /// digest on this hasher in between starts over.
    public func begin() {
        start()
    }

    public func add(_ part: ArraySlice<UInt8>) {
        part.withUnsafeBytes { update($0) }
    }

    public func end() -> Digest256 { finish() }

    private func start() {
        switch engine {
        case .direct(let functions, let state):
            check(functions.initialise(state), "SHA256_Init")
        case .envelope(let context, let algorithm, let initialise, _, _):
            check(initialise(context, algorithm, nil), "EVP_DigestInit_ex2")
        }
    }

    private func update(_ raw: UnsafeRawBufferPointer) {
        switch engine {
        case .direct(let functions, let state):
            check(functions.update(state, raw.baseAddress, raw.count), "SHA256_Update")
        case .envelope(let context, _, _, let update, _):
            check(update(context, raw.baseAddress, raw.count), "EVP_DigestUpdate")
        }
    }

    private func finish() -> Digest256 {
        var out = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        // The bytes of a 32-byte tuple: never without an address.
        withUnsafeMutableBytes(of: &out) { raw in
            let bytes = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            switch engine {
            case .direct(let functions, let state):
                check(functions.finish(bytes, state), "SHA256_Final")
            case .envelope(let context, _, _, _, let finish):
                var length: UInt32 = 0
                check(finish(context, bytes, &length), "EVP_DigestFinal_ex")
            }
        }
        return withUnsafeBytes(of: &out) { Digest256(loading: $0) }
    }

    /// SHA-256(0x01 ‖ left ‖ right): an RFC 9162 interior node, hashed without
    /// building the concatenation (the tree hashes one per append).
    public func node(_ left: Digest256, _ right: Digest256) -> Digest256 {
        start()
        var byte: UInt8 = 0x01
        withUnsafeBytes(of: &byte) { update($0) }
        left.withUnsafeBytes { update($0) }
        right.withUnsafeBytes { update($0) }
        return finish()
    }

    /// SHA-256 of a byte prefix, then a slice of a larger buffer: hashes a
    /// stored record in place without copying it out first.
    public func digest(prefix: UInt8, _ data: [UInt8], range: Range<Int>) -> Digest256 {
        digest(prefix: prefix, data.span.bytes, range: range)
    }

    /// The same over bytes lent in place (a value in LMDB's map).
    public func digest(prefix: UInt8, _ data: RawSpan, range: Range<Int>) -> Digest256 {
        start()
        var byte = prefix
        withUnsafeBytes(of: &byte) { update($0) }
        data.withUnsafeBytes { raw in update(UnsafeRawBufferPointer(rebasing: raw[range])) }
        return finish()
    }

    private func check(_ rc: Int32, _ operation: String) {
        // SHA-256's own calls always succeed; the envelope's on a fetched
        // SHA-256 fail only on allocation failure.
        precondition(rc == 1, "\(operation) failed")
    }
}

/// Lower-case hexadecimal, the form digests take in text and JSON.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = nibble(utf8[i]), let lo = nibble(utf8[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The value of one hex digit of either case, nil for any other byte.
    @inline(__always)
    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
