import Foundation
import LedgerCore

/// Where a command writes: results to `standardOutput`, messages and progress
/// to `standardError`. Tests capture both by passing buffers.
public final class OutputStream: @unchecked Sendable {
    private let handle: FileHandle?
    private let lock = NSLock()
    private var buffer = Data()
    /// Whether this stream is a terminal: decides colour and progress lines.
    public let isTerminal: Bool

    /// Writes to a file descriptor (1 or 2).
    public init(fileDescriptor: Int32) {
        handle = FileHandle(fileDescriptor: fileDescriptor, closeOnDealloc: false)
        isTerminal = isatty(fileDescriptor) == 1
    }

    /// Collects what is written, for tests.
    public init() {
        handle = nil
        isTerminal = false
    }

    public func write(_ text: String) {
        let data = Data(text.utf8)
        if let handle {
            handle.write(data)
        } else {
            lock.lock()
            buffer.append(data)
            lock.unlock()
        }
    }

    /// Writes `text` and a newline.
    public func line(_ text: String = "") { write(text + "\n") }

    /// What was written, when collecting.
    public var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: buffer, as: UTF8.self)
    }
}

/// Renders values as JSON for `--json`: keys sorted, so output is stable for scripts and tests.
enum JSONOutput {
    static func render(_ value: Any) -> String {
        do {
            let data = try JSONSerialization.data(
                withJSONObject: value,
                options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes, .fragmentsAllowed])
            return String(decoding: data, as: UTF8.self)
        } catch {
            // Only non-JSON types (a Date, a Swift struct) fail here: a bug in the command, not user input.
            preconditionFailure("a --json result holds a value JSON cannot represent: \(error)")
        }
    }
}

extension String {
    /// This person-written text (a name, a description, a value, a server's
    /// message) made safe for one line of text output: control characters,
    /// line breaks and bidi overrides shown as visible escapes, so what was
    /// recorded cannot move the cursor, hide text or forge a line. Never for
    /// JSON output, which must stay exact.
    var terminalSafe: String { TerminalText.singleLine(self) }
}

/// Plain-text tables: columns padded to their widest cell.
///
/// Every cell is shown through `TerminalText.singleLine`: cells hold names
/// and messages that people and servers wrote, and one line break or escape
/// sequence in a cell would forge the rows below it.
enum TextTable {
    static func render(header: [String], rows: [[String]]) -> String {
        let header = header.map(\.terminalSafe)
        let rows = rows.map { $0.map(\.terminalSafe) }
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func format(_ row: [String]) -> String {
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }
        return ([format(header)] + rows.map(format)).joined(separator: "\n")
    }
}
