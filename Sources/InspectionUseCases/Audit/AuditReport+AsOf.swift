import FoundationEssentials
import InspectionAudit
import InspectionDomain
import LedgerCore

extension AuditReport {
    /// The report's text as of a moment (`jqc audit --as-of`): the verdict,
    /// the form exactly as `jqc show` printed it at that moment
    /// (`FormReport`), then the timeline up to it.
    public var asOfText: String {
        var lines = ["AUDIT of inspection \(inspectionID.lowercased)", "RESULT: \(headline)"]
        lines += chainLines.map { "  " + $0 }
        for problem in problems { lines.append("  ! \(problem)") }
        if let asOf {
            lines.append(
                "AS OF: \(asOf.requested) → after position \(asOf.position), recorded \(asOf.recordedAt.iso8601)")
        }
        lines.append("")
        lines.append(FormReport(state: form, ownDevice: ownDevice).text)
        lines.append("")
        lines += timelineTextLines
        return lines.joined(separator: "\n")
    }

    /// Why the audit exits with status 1 (the report printed first), nil when it is clean.
    public var failure: AuditFailure? {
        guard !isClean else { return nil }
        // The headline names the finding; a single other problem is named too.
        let detail = chain.isIntact && problems.count == 1 ? ": \(problems[0])" : ""
        return AuditFailure(message: "audit of \(inspectionID.lowercased): \(headline)\(detail)")
    }
}

/// An audit that found a proof failing, a chain not intact, a photo file
/// missing or altered, or the inspection's own records damaged.
public struct AuditFailure: Error, CustomStringConvertible, Sendable, Equatable {
    /// The inspection, the headline, and a single other problem if there is one.
    public let message: String

    public var description: String { message }
}
