import FoundationEssentials
import Glibc

/// The exact bytes of a command-line argument that is not valid UTF-8.
///
/// Swift decodes `argv` into strings, replacing each invalid byte with
/// U+FFFD, so a file name in another encoding (Latin-1 from an old camera,
/// bytes from a broken archive) no longer names its file. A path argument
/// that holds U+FFFD is looked up again in the process's own `argv`, whose
/// bytes are exact, so the file can still be opened as it is named.
enum RawArgument {
    /// The bytes of the `argv` entry that decodes to `argument` and is not
    /// valid UTF-8; nil when `argument` holds no replacement character, or
    /// no entry matches (a run in-process, through `JQC.main`).
    static func bytes(of argument: String) -> [UInt8]? {
        guard argument.unicodeScalars.contains("\u{FFFD}") else { return nil }
        for index in 0..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
            // Valid UTF-8 decodes to itself: only an entry with invalid bytes can be the one.
            guard String(validating: bytes, as: UTF8.self) == nil else { continue }
            if String(decoding: bytes, as: UTF8.self) == argument { return bytes }
        }
        return nil
    }
}
