import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc check`: consistency checks beside the chain's own (`jqc verify`).
///
/// Each check is one flag and one `Check` value; without a flag every check
/// runs. A new check adds a flag to `checks` and a case to `run(_:on:)`.
struct CheckCommand: RunnableCommand {
    static let path = ["check"]

    /// The checks, by flag name.
    enum Check: String, CaseIterable, Sendable {
        case photos
    }

    static let checks: [(Check, FlagSpec)] = [
        (
            .photos,
            FlagSpec(
                "photos", help: "Photo files no event names, events whose file is missing, files that changed.")
        )
    ]

    static let spec = CommandSpec(
        "check", abstract: "Check the ledger's files against its log (photos); exit status 1 when anything is wrong.",
        discussion: "Without a flag, every check runs. Nothing is changed: each finding says what to do.",
        group: "Auditing", flags: checks.map(\.1))

    var selected: [Check]

    init(_ parsed: ParsedCommand) throws(UsageError) {
        var chosen: [Check] = []
        for (check, flag) in Self.checks where try parsed.isSet(flag) { chosen.append(check) }
        selected = chosen.isEmpty ? Check.allCases : chosen
    }

    /// One problem found, for text and JSON.
    struct Finding {
        var check: Check
        var kind: String
        var subject: String
        var message: String

        /// An entry of `findings` in `jqc check --json`.
        var jsonValue: JSONValue {
            .object([
                "check": .string(check.rawValue), "kind": .string(kind), "subject": .string(subject),
                "message": .string(message),
            ])
        }
    }

    func run(_ invocation: Invocation) throws {
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        var findings: [Finding] = []
        for check in selected {
            findings += try Self.run(check, on: auditor)
        }
        if invocation.json {
            invocation.printJSON(
                .object([
                    "checks": .strings(selected.map(\.rawValue)), "ok": .bool(findings.isEmpty),
                    "findings": .array(findings.map(\.jsonValue)),
                ]))
        } else {
            for finding in findings { invocation.stdout.line(finding.message) }
            if findings.isEmpty {
                invocation.stdout.line("ok: \(selected.map(\.rawValue).joined(separator: ", ")) checked, nothing wrong")
            }
        }
        if !findings.isEmpty {
            throw JQCError.verificationFailed(
                "\(findings.count) problem\(findings.count == 1 ? "" : "s") found (listed above).")
        }
    }

    static func run(_ check: Check, on auditor: AuditorLedger) throws -> [Finding] {
        switch check {
        case .photos: try photoFindings(auditor)
        }
    }

    /// The photo files against the photos the log names (`PhotoFileCheck`).
    static func photoFindings(_ auditor: AuditorLedger) throws -> [Finding] {
        try PhotoFileCheck.findings(auditor).map {
            Finding(check: .photos, kind: $0.kind.rawValue, subject: $0.sha256, message: $0.message)
        }
    }
}
