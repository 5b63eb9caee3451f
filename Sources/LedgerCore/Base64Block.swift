import CCrypto
import FoundationEssentials
import Glibc

/// Standard base64 decoded by libcrypto (`EVP_DecodeBlock`), a run of text at
/// a time, and the searches a streamed reader needs to find such runs
/// (`memchr`): the C calls of a handover file's photo decoding, each checked
/// here, so the reader above holds no pointer.
///
/// `EVP_DecodeBlock` alone is lenient: it reads `=` anywhere as a zero
/// value and trims white space at either end. `decode` therefore takes only
/// text without `=` (the caller finds padding with `firstIndex`) and accepts
/// a run only when every byte decoded (three bytes per four characters
/// exactly): a run it answers false for is judged byte by byte by the caller,
/// so strictness and the wording of refusals stay the caller's.
public enum Base64Block {
    /// The most text one `EVP_DecodeBlock` call is given (its length is an
    /// `int`); longer runs are decoded in pieces of this size (a multiple of 4).
    static let pieceSize = 1 << 24

    /// Writes the bytes of `text[range]`, whole groups of four characters of
    /// the standard alphabet without `=` (`range.count` a multiple of 4), into
    /// `out` from `offset` on (`out` holds at least `range.count / 4 * 3`
    /// bytes there: written in place, never grown, which a debug build would
    /// do a byte at a time). False when a byte is not of the alphabet (what
    /// was written then is garbage the caller does not count).
    public static func decode(_ text: [UInt8], _ range: Range<Int>, into out: inout [UInt8], at offset: Int) -> Bool {
        precondition(range.count % 4 == 0 && range.lowerBound >= 0 && range.upperBound <= text.count)
        precondition(offset >= 0 && out.count - offset >= range.count / 4 * 3)
        let decodeBlock = LibCrypto.functions.decodeBlock
        var piece = range.lowerBound
        var written = offset
        return text.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                while piece < range.upperBound {
                    let length = min(pieceSize, range.upperBound - piece)
                    // Both buffers hold bytes here (a piece is left, and room for it, by the precondition).
                    let rc = decodeBlock(output.baseAddress! + written, input.baseAddress! + piece, Int32(length))
                    guard decodedWhole(rc, length) else { return false }
                    piece += length
                    written += length / 4 * 3
                }
                return true
            }
        }
    }

    /// The one check of `EVP_DecodeBlock`'s answer: -1 is a byte outside the
    /// alphabet; fewer bytes than three per four characters means it trimmed
    /// white space at an end. Either is text the caller must judge itself.
    private static func decodedWhole(_ rc: Int32, _ length: Int) -> Bool {
        rc >= 0 && Int(rc) == length / 4 * 3
    }

    /// The index of the first `byte` in `bytes[range]`, or `range.upperBound`
    /// when there is none (libc's `memchr`).
    public static func firstIndex(of byte: UInt8, in bytes: [UInt8], _ range: Range<Int>) -> Int {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard !range.isEmpty else { return range.upperBound }
        return bytes.withUnsafeBufferPointer { raw in
            let base = raw.baseAddress! + range.lowerBound
            guard let found = memchr(base, Int32(byte), range.count) else { return range.upperBound }
            return range.lowerBound + (UnsafeRawPointer(found) - UnsafeRawPointer(base))
        }
    }
}
