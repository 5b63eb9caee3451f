import Foundation

/// Reads a handover file in chunks, judging each chunk as it arrives, so a
/// file that cannot be a handover file is refused at its first impossible
/// byte instead of after all of it is in memory (`Schemas/ledger-format.md`
/// § Handover files, bounds): outside strings only the bytes JSON allows
/// there (white space, `{}[]:,"`, the characters of numbers and of `true`,
/// `false`, `null`), inside strings no control character, and the first
/// value an object. A file that passes is still read strictly afterwards
/// (`StrictJSON`); this check never refuses well-formed JSON.
///
/// The bytes go straight into one buffer, never a `Data` copied again, so
/// reading takes at most the file's size plus one chunk.
enum HandoverFileReader {
    /// How much is read at a time.
    static let chunkSize = 1 << 20

    /// Why a file stopped being read.
    struct NotJSON: Error, CustomStringConvertible {
        var offset: Int
        var byte: UInt8
        var description: String {
            "the file is not well-formed JSON (byte 0x\(String(byte, radix: 16, uppercase: true)) at offset "
                + "\(offset) cannot appear there)"
        }
    }

    /// The scanner's state between chunks: where the last byte lay
    /// (`StrictJSON.Scanner`, the strict reader's own), whether the first
    /// value began, and the offset of the next byte.
    struct Scan {
        var scanner = StrictJSON.Scanner()
        var started = false
        var offset = 0

        static let allowedOutside: Set<UInt8> = Set(Array(" \t\r\n{}[]:,\"0123456789+-.eEtrufalsn".utf8))

        mutating func take(_ bytes: ArraySlice<UInt8>) throws(NotJSON) {
            for byte in bytes {
                defer { offset += 1 }
                switch scanner.place(of: byte) {
                case .escaped, .closingQuote: continue
                case .inString:
                    guard byte >= 0x20 else { throw NotJSON(offset: offset, byte: byte) }
                    continue
                case .outside: break
                }
                guard Self.allowedOutside.contains(byte) else { throw NotJSON(offset: offset, byte: byte) }
                if !started, !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D) {
                    // Anything but an object is refused by the strict reader anyway; say so at once.
                    guard byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") else {
                        throw NotJSON(offset: offset, byte: byte)
                    }
                    started = true
                }
            }
        }
    }

    /// At most `limit` bytes of `handle` (one more tells the file grew past
    /// it), each chunk scanned as it is read; `NotJSON` at the first byte no
    /// JSON text can hold there.
    static func read(_ handle: FileHandle, limit: Int, expectedSize: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(expectedSize, limit) + 1)
        var scan = Scan()
        while bytes.count <= limit {
            guard let chunk = try handle.read(upToCount: min(chunkSize, limit + 1 - bytes.count)), !chunk.isEmpty
            else { break }
            let start = bytes.count
            bytes.append(contentsOf: chunk)
            try scan.take(bytes[start...])
        }
        return bytes
    }
}
