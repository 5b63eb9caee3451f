import FoundationEssentials
import Glibc

/// The process's environment as `JQC.main` takes it, read from `environ`.
///
/// `ProcessInfo.processInfo.environment` gives the same dictionary, but set
/// up Foundation's process information first and split each entry through
/// `Character`s and `Substring`s: about a fifth of `jqc --version`'s
/// instructions. Here an entry is split at its first `=` byte, which is the
/// same split wherever the entry is ASCII; any other entry is split as
/// Foundation splits it (its first `=` Character), so the result is the
/// same for every environment: entries without `=` left out, and a name
/// given twice keeps its last value.
public enum ProcessEnvironment {
    /// Every variable of this process.
    public static func current() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let text = entry.pointee {
            if let (name, value) = split(text) { variables[name] = value }
            entry += 1
        }
        return variables
    }

    /// An entry's name and value; nil without `=`.
    static func split(_ text: UnsafePointer<CChar>) -> (String, String)? {
        let length = strlen(text)
        return text.withMemoryRebound(to: UInt8.self, capacity: length) { start in
            let bytes = UnsafeBufferPointer(start: start, count: length)
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return splitAsFoundation(String(cString: text)) }
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            return (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self)
            )
        }
    }

    /// Foundation's split, for an entry that is not ASCII (an `=` may then
    /// be part of a longer Character, which is no separator).
    static func splitAsFoundation(_ text: String) -> (String, String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}
