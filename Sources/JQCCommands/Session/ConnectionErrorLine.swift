import FoundationEssentials
import HTTPCore
import LedgerCore

/// A connection error in one short line: what went wrong with the network,
/// in a few words, and where the whole story is (`--verbose`).
enum ConnectionErrorLine {
    static let advice = "Run with --verbose for details."

    /// What happened to the connection, with the transport's last words
    /// (libcurl's "Couldn't connect to server"), never the request's URL.
    static func cause(_ error: TransportError) -> String {
        switch error {
        case .couldNotConnect(let detail): "the server could not be reached\(lastWords(detail))"
        case .timedOut(let detail): "the server did not answer in time\(lastWords(detail))"
        case .connectionLost(let detail): "the connection was lost before the answer\(lastWords(detail))"
        default: TerminalText.singleLine(error.description)
        }
    }

    /// ` (the text after the detail's last ": ")`, redacted and on one line; empty for none.
    static func lastWords(_ detail: String) -> String {
        let text = Redaction.text(detail)
        let last = text.components(separatedBy: ": ").last?.trimming(.spaces) ?? ""
        return last.isEmpty ? "" : " (\(TerminalText.singleLine(last)))"
    }

    /// A sync's "could not reach the server" stop in one line: its first
    /// clause, then what happens next.
    static func syncStop(_ why: String) -> String {
        let colon = why.utf8.firstRange(of: ": ".utf8)
        let paren = why.utf8.firstRange(of: " (".utf8)
        var head: Substring
        if let colon, paren.map({ colon.lowerBound < $0.lowerBound }) ?? true {
            head = why[..<colon.lowerBound]
        } else if let paren {
            head = why[..<paren.lowerBound]
        } else {
            head = why[...]
        }
        if head.hasSuffix(".") { head = head.dropLast() }
        return TerminalText.singleLine(String(head))
            + ". Everything waits for the next sync. \(advice)"
    }
}
