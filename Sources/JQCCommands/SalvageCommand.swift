import ArgumentParsing
import Foundation
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import Synchronization

/// `jqc salvage DEST`: from a damaged store, every record whose chain still
/// verifies, up to the first break, copied into a new ledger.
///
/// The damaged store is read only, and only in a child process
/// (`jqc salvage-read`): LMDB can meet a page it can only assert on, which
/// ends that process, and the records it printed before are kept. When the
/// pre-flight check refuses the file, the child reads repaired scratch copies
/// instead (one per sane meta page, padded if truncated) and the longest
/// verified prefix wins. The records are appended to the new ledger through
/// the normal `EventLog`, so the chain (the same hashes), the indexes and the
/// views are built as for any append.
struct SalvageCommand: RunnableCommand {
    static let path = ["salvage"]
    static let destinationArgument = PositionalSpec("DEST", help: "A directory that does not exist yet, or is empty.")
    static let spec = CommandSpec(
        "salvage",
        abstract:
            "Copy every record that still verifies out of a damaged ledger into a new one, and say what was lost.",
        discussion: """
            The damaged ledger is only read. Records are copied in order up to the first one whose chain link \
            fails or that cannot be read; the new ledger's digest at that position equals the old one's. The \
            photos that match their names and config.json are copied; reference data is not (run 'jqc pull' \
            in the new ledger). Use the new ledger with --ledger DEST, or put it in place of the old one.
            """,
        group: "Ledger",
        positionals: [destinationArgument])

    var destination: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        destination = try parsed.require(Self.destinationArgument)
    }

    func run(_ invocation: Invocation) throws {
        let home = invocation.home
        guard home.exists || FileManager.default.fileExists(atPath: home.storePath + "/data.mdb") else {
            throw LedgerDirectoryError.noLedger(home.path)
        }
        guard FileManager.default.fileExists(atPath: home.storePath + "/data.mdb") else {
            throw JQCError.refused(
                "\(home.storePath)/data.mdb does not exist, so there is nothing to salvage. Restore a backup.")
        }
        let target = LedgerDirectory.resolve(option: destination, environment: invocation.environment)
        let destination = try CopyDestination.claim(target.path, ledger: home.path, for: "salvage")
        let scratch = target.path + "/.salvage-scratch"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let salvaged: Salvage
        let summary: LedgerCopy.Summary
        var repaired = false
        do {
            let sources = try EventLog.salvageSources(of: home.storePath, scratch: scratch)
            let readings = try sources.map { try Salvage.read($0) }
            guard let best = readings.max(by: { $0.events.count < $1.events.count }) else {
                throw JQCError.refused(
                    "neither meta page of \(home.storePath)/data.mdb can be used, so no record can be found; "
                        + "nothing was written. Restore a backup.")
            }
            guard !best.events.isEmpty else {
                throw JQCError.refused(
                    "no record of \(home.storePath) could be salvaged (\(best.firstBreak ?? "the events table is empty")); "
                        + "nothing was written. Restore a backup.")
            }
            salvaged = best
            repaired = sources != [home.storePath]
            try? FileManager.default.removeItem(atPath: scratch)
            summary = try Self.write(best, into: target, from: home)
        } catch {
            destination.remove()
            throw LedgerCopy.spaceNamed(error, at: target.path)
        }
        let kept = UInt64(salvaged.events.count)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "salvage": .string(target.path), "records": .integer(kept),
                        "head": .string(summary.head.description), "first_break": .optional(salvaged.firstBreak),
                        "records_after_break": .integer(salvaged.seenAfterBreak),
                        "photos": .integer(summary.photos.copied), "meta_pages_repaired": .bool(repaired),
                    ])))
            return
        }
        invocation.stdout.line(
            "Salvaged \(kept) records (positions 1–\(kept)) into \(target.path), chain head \(summary.head).")
        if let firstBreak = salvaged.firstBreak {
            let after =
                salvaged.seenAfterBreak > 0
                ? " \(salvaged.seenAfterBreak) more records were found after it and are not trusted." : ""
            invocation.stdout.line("Lost: everything from position \(kept + 1) on (\(firstBreak)).\(after)")
            if let stored = salvaged.storedCount, stored > kept {
                invocation.stdout.line(
                    "The store's events table counts \(stored) records: \(stored - kept) were not salvaged.")
            }
        } else {
            invocation.stdout.line("Every record found in the store verified and was copied.")
        }
        if repaired {
            invocation.stdout.line(
                "The store's meta pages were damaged, so it was read through a repaired copy of them: a commit "
                    + "that only the damaged meta page recorded cannot be recovered.")
        }
        invocation.stdout.line(
            "Copied \(summary.photos.copied) photos and config.json; reference data was not copied: run "
                + "'jqc --ledger \(target.path) pull'.")
    }

    /// Creates the new ledger and appends the salvaged events to it.
    static func write(_ salvage: Salvage, into target: LedgerDirectory, from home: LedgerDirectory) throws
        -> LedgerCopy.Summary
    {
        try FileStore.makeDirectory(target.photosPath)
        let log = try EventLog(directory: target.storePath, access: .creating)
        var start = 0
        while start < salvage.events.count {
            let end = min(start + 1000, salvage.events.count)
            try log.append(Array(salvage.events[start..<end]))
            start = end
        }
        let head = try log.head()
        log.close()
        if let last = salvage.lastHash, head.head != last {
            throw JQCError.verificationFailed(
                "the new ledger's chain head (\(head)) differs from the salvaged records' own; nothing was kept.")
        }
        // Opening the whole ledger builds every view from the appended log.
        try InspectionLedger(storePath: target.storePath, photosPath: target.photosPath, access: .creating).close()
        let photos = try LedgerCopy.copyPhotos(from: home, to: target)
        if FileManager.default.fileExists(atPath: home.configPath) {
            try LedgerCopy.copyConfig(from: home, to: target)
        } else {
            let config = LedgerConfig(deviceID: UUID(), serverURL: nil, createdAt: SystemClock().now())
            try config.save(target)
        }
        return LedgerCopy.Summary(events: head.position, head: head, photos: photos)
    }
}

/// What one reading of a damaged store gave: the verified prefix and why it ended.
struct Salvage {
    var events: [PendingEvent] = []
    var lastHash: Digest256?
    var firstBreak: String?
    /// Records the child printed after the first break.
    var seenAfterBreak = 0
    /// How many records the store's `events` table counts, if it could say.
    var storedCount: UInt64?

    /// Runs `jqc salvage-read STORE` and checks what it prints, link by link.
    static func read(_ store: String) throws -> Salvage {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = ["salvage-read", store]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errors = ErrorCollector(err.fileHandleForReading)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = errors.wait()
        var salvage = Salvage()
        var previous = Digest256.zero
        var expected: UInt64 = 1
        let chain = HashChain()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            if salvage.firstBreak != nil {
                salvage.seenAfterBreak += 1
                continue
            }
            if line.first == UInt8(ascii: "#") {
                salvage.storedCount = UInt64(String(decoding: line.dropFirst(2), as: UTF8.self))
                continue
            }
            if line.first == UInt8(ascii: "!") {
                salvage.firstBreak =
                    "the store could not be read past position \(expected - 1): "
                    + childReason(String(decoding: line.dropFirst(2), as: UTF8.self), process)
                continue
            }
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2, let position = UInt64(String(decoding: fields[0], as: UTF8.self)),
                let value = hexBytes(fields[1]), value.count > 32, let stored = Digest256(bytes: Array(value[0..<32]))
            else {
                salvage.firstBreak = "the entry after position \(expected - 1) could not be read"
                continue
            }
            guard position == expected else {
                salvage.firstBreak = "position \(expected) is missing"
                salvage.seenAfterBreak += 1
                continue
            }
            guard chain.link(previous: previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count)) == stored
            else {
                salvage.firstBreak = "record \(position) fails its chain check (it was changed after it was written)"
                salvage.seenAfterBreak += 1
                continue
            }
            // Its link holds: the record is judged as `verify --full` judges it,
            // and one the format does not define is not copied (nor laundered
            // into a well-formed copy).
            let record: EventRecord
            do {
                _ = try EventRecord.checkedHeader(ofEncoded: value.span.bytes, at: 32)
                record = try EventRecord(decoding: value, at: 32)
            } catch {
                salvage.firstBreak = "record \(position) is not a record this program reads (\(error))"
                salvage.seenAfterBreak += 1
                continue
            }
            guard record.position == position else {
                salvage.firstBreak = "record \(position) holds the record written as \(record.position)"
                salvage.seenAfterBreak += 1
                continue
            }
            salvage.events.append(record.event)
            salvage.lastHash = stored
            previous = stored
            expected += 1
        }
        if salvage.firstBreak == nil, process.terminationStatus != 0 || process.terminationReason != .exit {
            salvage.firstBreak =
                "the store could not be read past position \(expected - 1): " + childReason(stderr, process)
        }
        return salvage
    }

    /// What the child said when it stopped, without the advice around it.
    static func childReason(_ text: String, _ process: Process) -> String {
        guard var why = text.split(separator: "\n").last.map(String.init) else {
            return process.terminationReason == .uncaughtSignal
                ? "the reader was ended by signal \(process.terminationStatus)"
                : "the reader ended with status \(process.terminationStatus)"
        }
        if why.hasPrefix("jqc: ") { why = String(why.dropFirst(5)) }
        if let damage = why.range(of: "is damaged: ") { why = String(why[damage.upperBound...]) }
        if let advice = why.range(of: ". Nothing was changed.") { why = String(why[..<advice.lowerBound]) }
        return TerminalText.singleLine(why)
    }

    static func executablePath() -> String {
        if let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return real }
        return CommandLine.arguments[0]
    }

    static func hexBytes(_ text: Data.SubSequence) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for c in text {
            let nibble: UInt8
            switch c {
            case 48...57: nibble = c - 48
            case 97...102: nibble = c - 87
            default: return nil
            }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}

/// Reads a pipe to its end on another thread, so neither pipe fills.
private final class ErrorCollector: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex(Data())

    init(_ handle: FileHandle) {
        DispatchQueue.global().async { [self] in
            let bytes = handle.readDataToEndOfFile()
            data.withLock { $0 = bytes }
            done.signal()
        }
    }

    /// Waits for the end of the pipe; every caller must, so the reading
    /// block never outlives the child it reads from.
    func wait() -> String {
        done.wait()
        return String(decoding: data.withLock { $0 }, as: UTF8.self)
    }
}

/// `jqc salvage-read STORE` (hidden): prints every entry of a store's
/// `events` table, one line each (`POSITION HEX`), for `salvage`, which runs
/// it as a child so that whatever LMDB does on a damaged page ends the child
/// only. The store is opened read-only and without a lock file: nothing in
/// it is written.
struct SalvageReadCommand: RunnableCommand {
    static let path = ["salvage-read"]
    static let storeArgument = PositionalSpec("STORE", help: "The store directory.")
    static let spec = CommandSpec(
        "salvage-read", abstract: "Print a store's raw events, for 'jqc salvage' (internal).",
        positionals: [storeArgument], hidden: true)

    var store: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        store = try parsed.require(Self.storeArgument)
    }

    func run(_ invocation: Invocation) throws {
        // Written straight to the file descriptor, line by line: if LMDB ends
        // this process, every line before it has reached the parent.
        let out = FileHandle.standardOutput
        do {
            let found = try EventLog.rawEntries(ofStoreAt: store) { count in
                out.write(Data("# \(count)\n".utf8))
            } entry: { position, value in
                var line = "\(position ?? 0) "
                line.reserveCapacity(line.utf8.count + value.count * 2 + 1)
                for byte in value {
                    line.append(Self.hex[Int(byte >> 4)])
                    line.append(Self.hex[Int(byte & 0x0F)])
                }
                out.write(Data((line + "\n").utf8))
            }
            if !found { out.write(Data("! the store has no events table\n".utf8)) }
        } catch {
            out.write(Data("! \(TerminalText.singleLine("\(error)"))\n".utf8))
        }
    }

    static let hex: [Character] = Array("0123456789abcdef")
}
