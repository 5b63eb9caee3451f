import FoundationEssentials
import Glibc
import InspectionDomain
import LedgerCore
import LedgerStore

/// Reads a handover file in chunks, judging each chunk as it arrives, so a
/// file that cannot be a handover file is refused at its first impossible
/// byte instead of after all of it is in memory (`Schemas/ledger-format.md`
/// § Handover files, bounds): outside strings only the bytes JSON allows
/// there (white space, `{}[]:,"`, the characters of numbers and of `true`,
/// `false`, `null`), inside strings no control character, and the first
/// value an object. A file that passes is still read strictly afterwards
/// (`StrictJSON`); this check never refuses well-formed JSON.
///
/// The bytes go straight into one buffer, never a `Data` copied again,
/// except each photo's base64 (`photo_files[i].data`,
/// `carried_photo_files[i].data`), which is decoded as it arrives into a
/// staging file of its own (`PhotoStager`): reading a well-formed file takes
/// its text without its photos plus one chunk.
enum HandoverFileReader {
    /// How much is read at a time.
    static let chunkSize = 1 << 20

    /// The scanner's state between chunks: where the last byte lay
    /// (`StrictJSON.Scanner`, the strict reader's own), whether the first
    /// value began, and the offset of the next byte.
    struct Scan {
        var scanner = StrictJSON.Scanner()
        var started = false
        var offset = 0

        static let allowedOutside: Set<UInt8> = Set(Array(" \t\r\n{}[]:,\"0123456789+-.eEtrufalsn".utf8))

        /// Judges one byte; answers where it lies.
        mutating func take(_ byte: UInt8) throws(HandoverFile.Unreadable) -> StrictJSON.Scanner.Place {
            defer { offset += 1 }
            let place = scanner.place(of: byte)
            switch place {
            case .escaped, .closingQuote: return place
            case .inString:
                guard byte >= 0x20 else { throw .unexpectedByte(offset: offset, byte: byte) }
                return place
            case .outside: break
            }
            guard Self.allowedOutside.contains(byte) else { throw .unexpectedByte(offset: offset, byte: byte) }
            if !started, !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D) {
                // Anything but an object is refused by the strict reader anyway; say so at once.
                guard byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") else {
                    throw .unexpectedByte(offset: offset, byte: byte)
                }
                started = true
            }
            return place
        }
    }

    /// Where the value being read lies, as far as telling a photo's
    /// `data` goes: the open containers, each object's last member name
    /// (its escapes read) and each array's index.
    struct Path {
        struct Frame {
            var isObject: Bool
            var expectingName: Bool
            var name: [UInt8]?
            var index = 0
        }
        var frames: [Frame] = []
        /// The bytes of a member name being read, or nil.
        var name: [UInt8]?

        static let photoMembers: [[UInt8]] = [Array("photo_files".utf8), Array("carried_photo_files".utf8)]

        /// `photo_files[i]` or `carried_photo_files[i]` when a string opening
        /// here is that entry's `data`.
        var photoEntry: String? {
            guard frames.count == 3, let top = frames[0].name, Self.photoMembers.contains(top), !frames[1].isObject,
                frames[2].isObject, !frames[2].expectingName, frames[2].name == Array("data".utf8)
            else { return nil }
            return "\(String(decoding: top, as: UTF8.self))[\(frames[1].index)]"
        }

        /// A byte outside strings; an opening quote starts a name where an
        /// object expects one.
        mutating func outside(_ byte: UInt8) {
            switch byte {
            case UInt8(ascii: "{"): frames.append(Frame(isObject: true, expectingName: true))
            case UInt8(ascii: "["): frames.append(Frame(isObject: false, expectingName: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = frames.popLast()
            case UInt8(ascii: ","):
                guard let last = frames.indices.last else { return }
                if frames[last].isObject { frames[last].expectingName = true } else { frames[last].index += 1 }
            case UInt8(ascii: ":"):
                guard let last = frames.indices.last else { return }
                frames[last].expectingName = false
            case UInt8(ascii: "\""):
                if let last = frames.last, last.isObject, last.expectingName { name = [] }
            default: break
            }
        }

        /// The longest member name kept, as the file writes it: the longest
        /// name looked for (`carried_photo_files`) with every character
        /// escaped as `\u00XX` fits.
        static let longestName = 6 * 19

        /// A byte inside a string, as the file holds it (a name's kept, up
        /// to `longestName` bytes: a longer one is never one looked for).
        mutating func inString(_ byte: UInt8) {
            guard var text = name else { return }
            text.append(byte)
            name = text.count > Self.longestName ? [0] : text
        }

        /// A name ends: kept as the name it stands for, its escapes read as
        /// the strict reading reads them (`"d\u0061ta"` is `data`, and its
        /// base64 is staged like the plain name's, never decoded in memory).
        mutating func closed() {
            guard let text = name, let last = frames.indices.last else { return }
            frames[last].name = Self.unescaped(text)
            name = nil
        }

        static func unescaped(_ text: [UInt8]) -> [UInt8] {
            guard text.contains(UInt8(ascii: "\\")) else { return text }
            let quoted = [UInt8(ascii: "\"")] + text + [UInt8(ascii: "\"")]
            // A name that does not read (a bad escape) is refused by the strict reading anyway.
            guard case .string(let name)? = try? JSONValue(parsing: quoted, .asTheBundleToolsRead) else { return [0] }
            return Array(name.utf8)
        }
    }

    /// What reading gave: the document with each photo's base64 left out
    /// (its `data` an empty string) and decoded into `staged` instead, by
    /// the entry's path (`photo_files[0]`); the SHA-256 of the whole file.
    struct Read {
        var document: [UInt8]
        var staged: [String: StagedPhotoFile]
        var sha256: Digest256
        var size: Int

        /// Removes the staged files (the reception is done or refused).
        func removeStaged() {
            for file in staged.values { unlink(file.path) }
        }
    }

    /// At most `limit` bytes of `handle` (one more tells the file grew past
    /// it), each chunk scanned as it is read, every photo's base64 decoded
    /// into a file of `staging` as it goes by; `HandoverFile.Unreadable.unexpectedByte` at the first byte no
    /// JSON text can hold there.
    static func read(_ handle: OpenFile, limit: Int, staging: String) throws -> Read {
        var reading = Reading(staging: staging)
        do {
            while reading.size <= limit {
                let chunk = try handle.read(upTo: min(chunkSize, limit + 1 - reading.size))
                guard !chunk.isEmpty else { break }
                try reading.take(chunk)
            }
        } catch {
            reading.abandon()
            throw error
        }
        return reading.result()
    }

    /// Where a run of a photo's base64 that needs no judging byte by byte
    /// ends in a chunk: at its next quote, backslash or `=`. The quote and
    /// backslash found are kept for the next run of the chunk, so a string
    /// with an escape every few characters (`\/`) is searched once, not
    /// once per run.
    struct PlainRun {
        private var quote = -1
        private var backslash = -1

        mutating func end(in chunk: [UInt8], from index: Int) -> Int {
            if quote < index { quote = Base64Block.firstIndex(of: UInt8(ascii: "\""), in: chunk, index..<chunk.count) }
            if backslash < index {
                backslash = Base64Block.firstIndex(of: UInt8(ascii: "\\"), in: chunk, index..<quote)
            }
            return Base64Block.firstIndex(of: UInt8(ascii: "="), in: chunk, index..<min(quote, backslash))
        }
    }

    /// The state of one read between chunks.
    struct Reading {
        let staging: String
        var scan = Scan()
        var path = Path()
        var stager: PhotoStager?
        var entry = ""
        var document: [UInt8] = []
        var staged: [String: StagedPhotoFile] = [:]
        let hasher = SHA256Hasher()
        var size = 0

        init(staging: String) {
            self.staging = staging
            hasher.begin()
        }

        mutating func take(_ chunk: [UInt8]) throws {
            hasher.add(chunk[...])
            size += chunk.count
            var copied = 0
            var index = 0
            var run = PlainRun()
            while index < chunk.count {
                if stager?.takesRuns == true {
                    // A photo's base64 between escapes: decoded by libcrypto a
                    // run at a time, the scanner only told how far it went
                    // (inside a string, no quote or backslash among it).
                    let end = run.end(in: chunk, from: index)
                    let taken = try stager?.takeRun(chunk, index..<end) ?? 0
                    scan.offset += taken
                    index += taken
                    guard index < chunk.count else { break }
                }
                try take(chunk, at: index, copied: &copied)
                index += 1
            }
            if stager == nil { document += chunk[copied...] }
        }

        /// One byte judged, and given to the photo being staged or to the path.
        private mutating func take(_ chunk: [UInt8], at index: Int, copied: inout Int) throws {
            let place = try scan.take(chunk[index])
            if stager != nil {
                // Mutated in place (never copied out): its buffer is not copied per byte.
                if place == .closingQuote {
                    // A second `data` of one entry (refused by the strict
                    // reading): the first one's file is not left behind.
                    if let earlier = staged[entry] { unlink(earlier.path) }
                    staged[entry] = try stager?.finish()
                    stager = nil
                    copied = index
                } else {
                    try stager?.take(chunk[index])
                }
                return
            }
            switch place {
            case .outside:
                path.outside(chunk[index])
                if chunk[index] == UInt8(ascii: "\""), let photo = path.photoEntry {
                    document += chunk[copied...index]
                    entry = photo
                    stager = try PhotoStager(directory: staging, number: staged.count)
                }
            case .inString, .escaped: path.inString(chunk[index])
            case .closingQuote: path.closed()
            }
        }

        func abandon() {
            stager?.abandon()
            for file in staged.values { unlink(file.path) }
        }

        func result() -> Read { Read(document: document, staged: staged, sha256: hasher.end(), size: size) }
    }
}
