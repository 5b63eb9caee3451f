import FoundationEssentials
import Glibc
import InspectionStore
import LedgerCore
import LedgerStore

extension HandoverFile {
    /// A photo file's bytes as a handover file gave them: decoded in memory
    /// (`HandoverFile(decoding:)`), or decoded while the file was read into
    /// a staging file of its own (`StagedPhotoFile`), so that a file of many
    /// large photos never holds more than one of them in memory.
    public enum PhotoBytes: Sendable {
        case inMemory(Data)
        case staged(StagedPhotoFile)

        /// The bytes' SHA-256 (a staged file's was taken while staging).
        func sha256(_ hasher: SHA256Hasher) -> Digest256 {
            switch self {
            case .inMemory(let data): hasher.digest(Array(data))
            case .staged(let file): file.sha256
            }
        }

        /// The bytes, read back when a staged file's are needed (one photo
        /// at a time: checked as an image, then stored).
        func load(name: String) throws -> Data {
            switch self {
            case .inMemory(let data): return data
            case .staged(let file):
                guard file.size <= PhotoStore.maximumSize else {
                    throw PhotoStore.Failure.tooLarge(path: name, size: file.size)
                }
                return try Data(contentsOf: URL(fileURLWithPath: file.path))
            }
        }
    }
}

/// One photo's base64 of a handover file, decoded as it was read into a
/// file in the photo store's staging directory, hashed on the way; never
/// more than `PhotoStore.maximumSize` bytes written (a larger photo is
/// counted, not kept, and refused as the store refuses it).
public struct StagedPhotoFile: Sendable {
    public var path: String
    public var size: Int
    public var sha256: Digest256
    /// False when the text was not standard base64 with padding (the
    /// strict reading's refusal, named by its path).
    public var isStandardBase64: Bool
}

/// Decodes one base64 string of a handover file as its bytes arrive, JSON
/// escapes included (`\/`, `\u00XX`), into a staging file: the runs
/// between escapes by libcrypto (`takeRun`), what needs judging (an escape,
/// the padding, a byte not of the alphabet) a byte at a time (`take`).
struct PhotoStager {
    let path: String
    private let handle: OpenFile
    private let hasher = SHA256Hasher()
    /// Decoded bytes not yet written: `buffer[0..<filled]`. Allocated once,
    /// room for a chunk's worth past the flushing point, and written in
    /// place (libcrypto decodes into it).
    private var buffer: [UInt8]
    private var filled = 0
    static let bufferSize = 2 * HandoverFileReader.chunkSize
    /// The values of the group being read (6 bits each), and how many.
    private var group: UInt32 = 0
    private var count = 0
    private var pads = 0
    private var size = 0
    private var valid = true
    /// After a backslash: the escape's letter, then the hex digits of `\u`.
    private var escape: [UInt8]?

    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8).enumerated()
        {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()

    init(directory: String, number: Int) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // `NAME.tmp-PID.RANDOM`: what `PhotoStore.removeStaleTemporaries`
        // removes should this process be killed before it removes it.
        path =
            "\(directory)/received-\(number).tmp-\(ProcessInfo.processInfo.processIdentifier)."
            + "\(UInt32.random(in: 0...UInt32.max))"
        // Made in place by open(2), never by `FileManager.createFile`, which
        // writes a `.dat.nosync…` file first and renames it: a kill between
        // the two left a file no stale-staging check recognises.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OpenFileError(name: path, step: "creating", code: errno) }
        handle = OpenFile(owning: descriptor, name: path)
        hasher.begin()
        buffer = [UInt8](repeating: 0, count: Self.bufferSize)
    }

    /// Whether `takeRun` may be given the text that follows: the string
    /// still reads as standard base64, no escape or padding begun.
    var takesRuns: Bool { valid && escape == nil && pads == 0 }

    /// Takes the characters `text[range]` (none of them a quote, backslash
    /// or `=`: the caller stops a run there): the group left open before
    /// them completed by hand, the whole groups after it decoded at once by
    /// libcrypto (`Base64Block`), the rest opening the next group. Answers
    /// how many it took: all, or fewer at a byte not of the alphabet, which
    /// the caller gives to `take` with the rest, judged as before.
    mutating func takeRun(_ text: [UInt8], _ range: Range<Int>) throws -> Int {
        precondition(takesRuns)
        var index = range.lowerBound
        while count != 0, index < range.upperBound {
            guard Self.values[Int(text[index])] != 0xFF else { return index - range.lowerBound }
            try character(text[index])
            index += 1
        }
        let whole = index..<index + (range.upperBound - index) / 4 * 4
        if filled + whole.count / 4 * 3 > buffer.count { try flush() }
        // A run longer than the buffer holds is taken in parts that fit it.
        let part = whole.prefix((buffer.count - filled) / 3 * 4)
        guard Base64Block.decode(text, part, into: &buffer, at: filled) else { return index - range.lowerBound }
        size += part.count / 4 * 3
        filled += part.count / 4 * 3
        if filled >= HandoverFileReader.chunkSize { try flush() }
        guard part.upperBound == whole.upperBound else { return part.upperBound - range.lowerBound }
        index = whole.upperBound
        while index < range.upperBound {
            guard Self.values[Int(text[index])] != 0xFF else { return index - range.lowerBound }
            try character(text[index])
            index += 1
        }
        return range.count
    }

    /// One byte of the string's text as the file holds it.
    mutating func take(_ byte: UInt8) throws {
        if var pending = escape {
            pending.append(byte)
            escape = pending
            if pending == [UInt8(ascii: "/")] {
                escape = nil
                try character(UInt8(ascii: "/"))
            } else if pending.first != UInt8(ascii: "u") {
                escape = nil
                valid = false
            } else if pending.count == 5 {
                escape = nil
                let code = UInt32(String(decoding: pending.dropFirst(), as: UTF8.self), radix: 16)
                if let code, code < 0x80 { try character(UInt8(code)) } else { valid = false }
            }
            return
        }
        if byte == UInt8(ascii: "\\") {
            escape = []
            return
        }
        try character(byte)
    }

    private mutating func character(_ byte: UInt8) throws {
        guard valid else { return }
        if byte == UInt8(ascii: "=") {
            pads += 1
            valid = pads <= 2
            return
        }
        let value = Self.values[Int(byte)]
        guard value != 0xFF, pads == 0 else {
            valid = false
            return
        }
        group = group << 6 | UInt32(value)
        count += 1
        if count == 4 {
            size += 3
            put(UInt8(truncatingIfNeeded: group >> 16))
            put(UInt8(truncatingIfNeeded: group >> 8))
            put(UInt8(truncatingIfNeeded: group))
            group = 0
            count = 0
            if filled >= HandoverFileReader.chunkSize { try flush() }
        }
    }

    /// One decoded byte into the buffer (flushed before it is full).
    private mutating func put(_ byte: UInt8) {
        buffer[filled] = byte
        filled += 1
    }

    private mutating func flush() throws {
        // Hashed whole, so a photo too large is refused as too large (by
        // `load`) rather than as another photo's file; written only up to
        // the largest photo the store takes.
        hasher.add(buffer[0..<filled])
        if size <= PhotoStore.maximumSize { try handle.write(buffer[0..<filled]) }
        filled = 0
    }

    /// The string ended: the last group judged as `StrictBase64` and the
    /// re-encoding check judge it (padding to a whole group, no stray bits).
    mutating func finish() throws -> StagedPhotoFile {
        // 2 values and 2 pads give one byte, 3 and 1 two; the bits left over must be 0.
        let unused: UInt32
        switch (count, pads) {
        case (0, 0): unused = 0
        case (2, 2): unused = group & 0x0F
        case (3, 1): unused = group & 0x03
        default: unused = 1
        }
        if escape != nil || unused != 0 { valid = false }
        if valid, count == 2 {
            size += 1
            put(UInt8(truncatingIfNeeded: group >> 4))
        }
        if valid, count == 3 {
            size += 2
            put(UInt8(truncatingIfNeeded: group >> 10))
            put(UInt8(truncatingIfNeeded: group >> 2))
        }
        try flush()
        try handle.close()
        return StagedPhotoFile(path: path, size: size, sha256: hasher.end(), isStandardBase64: valid)
    }

    /// Closes and removes the file of a string never finished.
    func abandon() {
        try? handle.close()
        unlink(path)
    }
}
