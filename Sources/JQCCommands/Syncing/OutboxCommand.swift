import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc outbox`.
struct OutboxCommand: CommandWithoutArguments {
    static let path = ["outbox"]
    static let spec = CommandSpec(
        "outbox", abstract: "List what the server has not acknowledged, in the order sync sends it.",
        discussion: """
            Then, apart, the submissions recorded on other devices that this device holds a copy of and that no \
            device has reported sent: this device sends nothing of them; 'jqc sync adopt ID' makes it their \
            sender when the device that submitted one cannot send it.
            """,
        group: "Syncing")

    func run(_ invocation: Invocation) throws {
        let (items, elsewhere) = try invocation.reading { ledger in
            (try ledger.outbox(), try ledger.unreportedSubmissions())
        }
        if invocation.json {
            invocation.printJSON(.array(items.map(\.jsonValue) + elsewhere.map(\.jsonValue)))
            return
        }
        if items.isEmpty, !elsewhere.isEmpty {
            invocation.stdout.line("Nothing for this device to send.")
        } else {
            try printOwn(items, invocation)
        }
        guard !elsewhere.isEmpty else { return }
        if !items.isEmpty { invocation.stdout.line("") }
        invocation.stdout.line(
            "Expected from other devices (this device sends nothing of them; if the device that submitted one "
                + "cannot send it, 'jqc sync adopt ID' makes this device its sender):")
        for copy in elsewhere { invocation.stdout.line("  " + Self.line(copy)) }
    }

    /// One submission of another device, as the outbox lists it.
    static func line(_ copy: UnreportedSubmission) -> String {
        let counts = "\(DeviceStatus.count(copy.photos, "photo")), \(DeviceStatus.count(copy.issues, "issue"))"
        var line =
            "inspection \(copy.inspectionID.lowercased.prefix(8))  submitted on device "
            + "\(copy.submittedOnDevice.lowercased), not yet reported sent (\(counts); submitted "
            + "\(copy.submittedAt.iso8601) by \(TerminalText.singleLine(copy.submittedBy)))"
        if let adopted = copy.adoptedAt {
            line += "; device \(copy.expectedSender.lowercased) adopted it at \(adopted.iso8601) and sends it"
        }
        return line
    }

    /// This device's own items: the table, or why there are none.
    private func printOwn(_ items: [OutboxItem], _ invocation: Invocation) throws {
        guard !items.isEmpty else {
            let drafts = try invocation.reading { try $0.summaries(.drafts) }.count
            invocation.stdout.line(
                SyncStanding.emptyOutboxLine(drafts: drafts, serverConfigured: try invocation.config().serverURL != nil)
            )
            return
        }
        invocation.printTable(
            header: ["KIND", "ID", "INSPECTION", "STATE", "ATTEMPTS", "NEXT TRY", "LAST ERROR / WAITING FOR"],
            rows: items.map { i in
                [
                    i.item.kind.rawValue, String(i.item.id.lowercased.prefix(8)),
                    String(i.inspectionID.lowercased.prefix(8)), i.state.rawValue, "\(i.attempts)",
                    i.nextAttemptAt.map { String($0.iso8601.prefix(19)) } ?? "-",
                    ([i.lastError, i.detail].compactMap { $0 }
                        + [i.adoptedFrom.map { "adopted from device \($0.lowercased)" }].compactMap { $0 })
                        .map(TerminalText.singleLine).joined(separator: "; "),
                ]
            })
    }
}
