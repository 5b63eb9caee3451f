import FoundationEssentials
import Glibc
import LedgerCore
import LedgerStore
import Synchronization

/// Where a command writes: results to `standardOutput`, messages and progress
/// to `standardError`. Tests capture both by passing buffers.
///
/// A command that prints a great deal (`jqc log` over a whole ledger) asks
/// for `buffered()`: then, unless the stream is a terminal, writes collect in
/// memory and reach the descriptor 64 KiB at a time, and on `flush()`, which
/// `JQC.main` calls before it returns. A system call per line capped such a
/// command at the kernel's rate of small writes.
///
/// A write that fails is remembered, and nothing more is written: a reader
/// that went away (EPIPE: `jqc log | head`, with SIGPIPE ignored) sets
/// `readerIsGone`, so a long listing stops; any other failure (a full disk)
/// is `writeFailure`, which `JQC.main` reports as the command's failure.
public final class TextOutput: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var buffering = false
    }

    private let fileDescriptor: Int32?
    private let state = Mutex(State())
    /// The errno of the first write that failed (0: none); nothing is
    /// written after it. Not behind the lock: a listing reads it for every
    /// block it hands over.
    private let failure = Atomic<Int32>(0)
    /// Whether this stream is a terminal: decides colour and progress lines.
    public let isTerminal: Bool

    /// Writes to a file descriptor (1 or 2).
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        isTerminal = isatty(fileDescriptor) == 1
    }

    /// Collects what is written, for tests.
    public init() {
        fileDescriptor = nil
        isTerminal = false
    }

    /// From now on, collect writes and pass them on in large blocks (unless
    /// this is a terminal, where a person reads each line as it comes).
    public func buffered() {
        guard !isTerminal else { return }
        state.withLock { $0.buffering = true }
    }

    public func write(_ text: String) {
        guard let fileDescriptor else {
            state.withLock { $0.pending.append(contentsOf: text.utf8) }
            return
        }
        let ready: [UInt8]? = state.withLock { state in
            state.pending.append(contentsOf: text.utf8)
            guard !state.buffering || state.pending.count >= 1 << 16 else { return nil }
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
        if let ready { writeAll(ready, to: fileDescriptor) }
    }

    /// Writes UTF-8 bytes: what a command that formats many lines into one
    /// reused buffer (`jqc log`) hands over, without making a String of them.
    /// A block at least as large as the buffer, with nothing held before
    /// it, goes straight to the descriptor, uncopied.
    public func write(utf8 bytes: [UInt8]) {
        guard let fileDescriptor else {
            state.withLock { $0.pending.append(contentsOf: bytes) }
            return
        }
        let direct = state.withLock { $0.pending.isEmpty && bytes.count >= 1 << 16 }
        if direct {
            writeAll(bytes, to: fileDescriptor)
            return
        }
        let ready: [UInt8]? = state.withLock { state in
            state.pending.append(contentsOf: bytes)
            guard !state.buffering || state.pending.count >= 1 << 16 else { return nil }
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
        if let ready { writeAll(ready, to: fileDescriptor) }
    }

    /// Writes `text` and a newline.
    public func line(_ text: String = "") { write(text + "\n") }

    /// Passes on whatever `buffered()` is holding.
    public func flush() {
        guard let fileDescriptor else { return }
        let ready = state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
        if !ready.isEmpty { writeAll(ready, to: fileDescriptor) }
    }

    /// Whether whoever read this stream went away (a closed pipe): what is
    /// written is dropped, and a listing may as well stop.
    public var readerIsGone: Bool { failure.load(ordering: .relaxed) == EPIPE }

    /// The errno of a write that failed other than for a reader gone away
    /// (ENOSPC, EIO): what the command printed is incomplete.
    public var writeFailure: Int32? {
        let code = failure.load(ordering: .relaxed)
        return code == 0 || code == EPIPE ? nil : code
    }

    /// What was written, when collecting.
    public var text: String {
        state.withLock { String(decoding: $0.pending, as: UTF8.self) }
    }

    /// Writes every byte, unless an earlier write failed; a failure is
    /// remembered (the first one: what comes after it is a consequence).
    private func writeAll(_ bytes: [UInt8], to fileDescriptor: Int32) {
        guard failure.load(ordering: .relaxed) == 0,
            let code = DurableFile.writeAll(bytes, to: fileDescriptor)
        else { return }
        _ = failure.compareExchange(expected: 0, desired: code, ordering: .relaxed)
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
extension Invocation {
    /// Prints `rows` under `header`, lined up; `none` instead, when given
    /// and there are no rows.
    func printTable(header: [String], rows: [[String]], none: String? = nil) {
        if rows.isEmpty, let none {
            stdout.line(none)
        } else {
            stdout.line(TextTable.render(header: header, rows: rows))
        }
    }
}

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
