import FoundationEssentials
import Glibc

/// Recently read texts, by their bytes, for `CBORReader.readText(cache:)`.
///
/// Direct-mapped: a text's bytes hash to one of 64 slots, so a lookup is one
/// hash and one comparison however many texts repeat (a scan meets every
/// event type, actor and device name). A slot holds the last text that
/// hashed to it; a collision only costs a fresh decode.
public struct TextCache: Sendable {
    /// Empty until the first text is remembered: a cache is made for every
    /// single record read, most of which remember nothing worth keeping.
    private var slots: [(bytes: [UInt8], text: String)?] = []
    private static let size = 64

    public init() {}

    /// A slot from the length and the first and last eight bytes: enough to
    /// tell the ledger's repeated texts apart (a collision only costs a
    /// decode), without reading every byte.
    @inline(__always)
    private static func slot(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash = UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        if bytes.count >= 8 {
            hash ^= bytes.loadUnaligned(as: UInt64.self)
            hash = (hash ^ (hash >> 29)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
        } else {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        hash = (hash ^ (hash >> 32)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: hash >> 58) & (size - 1)
    }

    func lookup(_ text: UnsafeRawBufferPointer) -> String? {
        guard !slots.isEmpty, let entry = slots[Self.slot(text)], entry.bytes.count == text.count else { return nil }
        // Compared only when the text has bytes, so both buffers have an address.
        let equal = entry.bytes.withUnsafeBytes { e in
            text.count == 0 || memcmp(text.baseAddress!, e.baseAddress!, text.count) == 0
        }
        return equal ? entry.text : nil
    }

    mutating func remember(_ bytes: [UInt8], _ text: String) {
        guard !bytes.isEmpty else { return }
        if slots.isEmpty { slots = Array(repeating: nil, count: Self.size) }
        slots[bytes.withUnsafeBytes { Self.slot($0) }] = (bytes, text)
    }
}
