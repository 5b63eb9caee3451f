import CCrypto
import Foundation

/// A SHA-256 digest: 32 bytes.
public struct Digest256: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// The all-zero value that stands before the first record of a chain.
    public static let zero = Digest256(unchecked: [UInt8](repeating: 0, count: 32))

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Accepts exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses 64 hexadecimal digits.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex), bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// The 32 bytes at `offset` of `span`, if it holds that many there.
    public init?(_ span: RawSpan, at offset: Int = 0) {
        guard offset >= 0, span.byteCount - offset >= 32 else { return nil }
        self.bytes = span.withUnsafeBytes { raw in Array(raw[offset..<(offset + 32)]) }
    }

    /// Whether the 32 bytes at `offset` of `span` are this digest, compared
    /// in place.
    public func isStored(in span: RawSpan, at offset: Int = 0) -> Bool {
        guard offset >= 0, span.byteCount - offset >= 32 else { return false }
        return span.withUnsafeBytes { raw in
            bytes.withUnsafeBytes { own in memcmp(raw.baseAddress! + offset, own.baseAddress!, 32) == 0 }
        }
    }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
}

/// OpenSSL's SHA-256 implementation, fetched once per process.
///
/// A fetch searches the provider store under its lock: it cost about 2.5 µs
/// per hasher in a durable commit, more than hashing the record. A fetched
/// `EVP_MD` is never changed after the fetch and OpenSSL lets threads share
/// it (each with its own `EVP_MD_CTX`); that is why this is
/// `@unchecked Sendable`. It lives as long as the process.
private final class FetchedSHA256: @unchecked Sendable {
    static let shared = FetchedSHA256()
    let algorithm: OpaquePointer

    private init() {
        // Fails only when OpenSSL's default provider is missing, which no
        // caller can handle.
        guard let algorithm = EVP_MD_fetch(nil, "SHA256", nil) else {
            preconditionFailure("OpenSSL has no SHA256 implementation (default provider missing)")
        }
        self.algorithm = algorithm
    }
}

/// SHA-256 through OpenSSL's libcrypto.
///
/// One hasher keeps one `EVP_MD_CTX` and reuses it for every digest, because
/// allocating a context per record would cost more than hashing a small record.
/// A hasher is not thread-safe; give each thread its own.
public final class SHA256Hasher {
    private let context: OpaquePointer
    private let algorithm: OpaquePointer

    public init() {
        // Fails only when the process is out of memory, which no caller can handle.
        guard let context = EVP_MD_CTX_new() else {
            preconditionFailure("EVP_MD_CTX_new failed: out of memory")
        }
        self.algorithm = FetchedSHA256.shared.algorithm
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// SHA-256 of the concatenation of `parts`.
    public func digest(_ parts: [UInt8]...) -> Digest256 {
        digest(parts: parts)
    }

    public func digest(parts: [[UInt8]]) -> Digest256 {
        var out = [UInt8](repeating: 0, count: 32)
        check(EVP_DigestInit_ex2(context, algorithm, nil), "EVP_DigestInit_ex2")
        for part in parts {
            part.withUnsafeBytes { raw in
                check(EVP_DigestUpdate(context, raw.baseAddress, raw.count), "EVP_DigestUpdate")
            }
        }
        var length: UInt32 = 0
        out.withUnsafeMutableBufferPointer { buffer in
            check(EVP_DigestFinal_ex(context, buffer.baseAddress, &length), "EVP_DigestFinal_ex")
        }
        return Digest256(unchecked: out)
    }

    /// SHA-256(0x01 ‖ left ‖ right): an RFC 9162 interior node, hashed without
    /// building the concatenation (the tree hashes one per append).
    public func node(_ left: Digest256, _ right: Digest256) -> Digest256 {
        var out = [UInt8](repeating: 0, count: 32)
        check(EVP_DigestInit_ex2(context, algorithm, nil), "EVP_DigestInit_ex2")
        var byte: UInt8 = 0x01
        check(EVP_DigestUpdate(context, &byte, 1), "EVP_DigestUpdate")
        left.bytes.withUnsafeBytes { raw in
            check(EVP_DigestUpdate(context, raw.baseAddress, raw.count), "EVP_DigestUpdate")
        }
        right.bytes.withUnsafeBytes { raw in
            check(EVP_DigestUpdate(context, raw.baseAddress, raw.count), "EVP_DigestUpdate")
        }
        var length: UInt32 = 0
        out.withUnsafeMutableBufferPointer { buffer in
            check(EVP_DigestFinal_ex(context, buffer.baseAddress, &length), "EVP_DigestFinal_ex")
        }
        return Digest256(unchecked: out)
    }

    /// SHA-256 of a byte prefix, then a slice of a larger buffer: hashes a
    /// stored record in place without copying it out first.
    public func digest(prefix: UInt8, _ data: [UInt8], range: Range<Int>) -> Digest256 {
        digest(prefix: prefix, data.span.bytes, range: range)
    }

    /// The same over bytes lent in place (a value in LMDB's map).
    public func digest(prefix: UInt8, _ data: RawSpan, range: Range<Int>) -> Digest256 {
        var out = [UInt8](repeating: 0, count: 32)
        check(EVP_DigestInit_ex2(context, algorithm, nil), "EVP_DigestInit_ex2")
        var byte = prefix
        check(EVP_DigestUpdate(context, &byte, 1), "EVP_DigestUpdate")
        data.withUnsafeBytes { raw in
            let slice = UnsafeRawBufferPointer(rebasing: raw[range])
            check(EVP_DigestUpdate(context, slice.baseAddress, slice.count), "EVP_DigestUpdate")
        }
        var length: UInt32 = 0
        out.withUnsafeMutableBufferPointer { buffer in
            check(EVP_DigestFinal_ex(context, buffer.baseAddress, &length), "EVP_DigestFinal_ex")
        }
        return Digest256(unchecked: out)
    }

    private func check(_ rc: Int32, _ operation: String) {
        // EVP digest calls on a fetched SHA-256 only fail on allocation failure.
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

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
