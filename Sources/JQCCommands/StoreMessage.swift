import Foundation
import LedgerCore

/// Messages for the ledger's files that would otherwise surface as a
/// Foundation or Swift error dump: what failed, why, what to do.
enum StoreMessage: Error, CustomStringConvertible {
    /// `config.json` exists but is not what `jqc init` wrote.
    case damagedConfig(path: String, why: String)
    /// A directory cannot be made because `blocking` (it, or a parent) is a file.
    case notADirectory(path: String, blocking: String)

    var description: String {
        switch self {
        case .damagedConfig(let path, let why):
            "\(path) is damaged: \(why). It holds this device's id: restore it from a backup (see 'jqc backup'); "
                + "the log itself was not touched."
        case .notADirectory(let path, let blocking):
            blocking == path
                ? "\(path) exists and is a file, not a directory; nothing was created. Point --ledger, JQC_HOME or "
                    + "XDG_DATA_HOME at a directory."
                : "\(path) cannot be created: \(blocking) is a file, not a directory; nothing was created. Point "
                    + "--ledger, JQC_HOME or XDG_DATA_HOME at a directory."
        }
    }

    /// A decoding failure in a few words, without the decoder's debug dump.
    static func reason(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : " at \"\(path.map(\.stringValue).joined(separator: "."))\""
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "it is not valid JSON" : "the value\(at(context.codingPath)) is not usable"
        case .keyNotFound(let key, _):
            return "it has no \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "the value\(at(context.codingPath)) has the wrong type"
        @unknown default:
            return "it cannot be decoded"
        }
    }

    /// Cuts every run of more than `limit` characters without a space (a
    /// pasted value, an id list) to its start and a count, so a message
    /// never echoes a huge value back whole.
    static func cuttingLongRuns(_ text: String, limit: Int = 120) -> String {
        guard text.count > limit else { return text }
        var result = ""
        var run = ""
        func flush() {
            if run.count > limit {
                result += run.prefix(limit / 2) + "…(\(run.count) characters)"
            } else {
                result += run
            }
            run = ""
        }
        for character in text {
            if character == " " || character == "\n" {
                flush()
                result.append(character)
            } else {
                run.append(character)
            }
        }
        flush()
        return result
    }
}
