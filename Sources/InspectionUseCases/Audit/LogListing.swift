import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Where the listing of `jqc log` goes: its lines (standard output), and
/// notes beside them (standard error), which with `json` keep the lines
/// each an event.
public protocol LogOutput {
    /// Whether the lines are events in their exported JSON form.
    var json: Bool { get }
    /// Whether each line is handed over as soon as it is formatted (a person watches).
    var isTerminal: Bool { get }
    /// Formatted lines, newlines included.
    func write(utf8 bytes: [UInt8])
    /// One line of the listing.
    func line(_ text: String)
    /// One line beside the listing.
    func note(_ text: String)
    /// Whether whoever reads the lines went away (a closed pipe): the
    /// listing stops, as nothing more would be read.
    var readerIsGone: Bool { get }
}

/// `jqc log`: the events `filter` selects, of one inspection (read through
/// its stream index, holes kept) or of the whole log (scanned ahead on a
/// thread of its own), each printed by a `LogPrinter`; a place where the
/// log should hold a record and does not is printed as such.
public struct LogListing {
    public let auditor: AuditorLedger
    public let filter: LogFilter

    public init(auditor: AuditorLedger, filter: LogFilter) {
        self.auditor = auditor
        self.filter = filter
    }

    /// Prints the selected events of `inspection` (any unique prefix), or
    /// of the whole log; answers how many were printed. What was formatted
    /// is handed over even when a read fails part way.
    public func print<Output: LogOutput>(inspection: String?, to output: Output) throws -> Int {
        // A store's records are its device's; a directory without its
        // config (a bare store handed to an auditor) names no device.
        let own = auditor.home.exists ? try LedgerConfig.load(auditor.home).deviceID : nil
        var printer = LogPrinter(auditor: auditor, output: output, filter: filter, ownDevice: own)
        defer { printer.flush() }
        if let inspection {
            try print(stream: try auditor.resolveInspection(inspection), &printer)
        } else {
            try printLog(&printer)
        }
        return printer.printed
    }

    private func print(stream id: UUID, _ printer: inout LogPrinter) throws {
        for entry in try auditor.history(of: id) {
            guard printer.wantsMore else { break }
            switch entry {
            case .record(let record):
                try printer.print(record)
            case .missing(let version, let position):
                if filter.admitsHole(at: position) {
                    printer.printHole(
                        at: position,
                        "version \(version) of \(EventWording.short(id)) is indexed here, but the log holds no "
                            + "record there")
                }
            case .unreadable(let version, let position, let why):
                if filter.admitsHole(at: position) {
                    printer.printHole(
                        at: position,
                        "version \(version) of \(EventWording.short(id)) is indexed here, but the record is "
                            + "unreadable (\(why))")
                }
            }
        }
    }

    /// The scan hands over damaged records and gaps as entries, so they are
    /// shown as such and the listing goes on. Records are read on a thread
    /// of their own, ahead of the formatting, which also decodes their
    /// payloads while it is ahead (`LogPrinter.preparation`).
    private func printLog(_ printer: inout LogPrinter) throws {
        let filter = self.filter
        try auditor.log.scanAhead(
            from: filter.firstPosition, prepare: LogPrinter.preparation(for: filter)
        ) { entry, decoded in
            guard printer.wantsMore else { return false }
            switch entry {
            case .record(let record):
                guard !filter.isPast(position: record.position) else { return false }
                try printer.print(record, decoded: decoded)
            case .unreadable(let position, let reason):
                guard !filter.isPast(position: position) else { return false }
                if filter.admitsHole(at: position) {
                    printer.printHole(at: position, "the record stored here is unreadable (\(reason))")
                }
            case .missing(let positions):
                guard !filter.isPast(position: positions.lowerBound) else { return false }
                if filter.admitsHole(at: positions.lowerBound) {
                    printer.printHole(
                        at: positions.lowerBound,
                        positions.count == 1
                            ? "no record: position \(positions.lowerBound) is missing from the log"
                            : "no records: positions \(positions.lowerBound)–\(positions.upperBound) are "
                                + "missing from the log")
                }
            }
            return true
        }
    }
}
