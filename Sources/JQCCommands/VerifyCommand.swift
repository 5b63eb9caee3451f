import ArgumentParsing
import Foundation
import LedgerCore
import LedgerStore

// MARK: - verify

/// `jqc verify`: recomputes the whole hash chain.
struct VerifyCommand: RunnableCommand {
    static let path = ["verify"]
    static let spec = CommandSpec(
        "verify", abstract: "Check the whole log: every hash recomputed, nothing changed, removed or reordered.",
        discussion: """
            With --digest, also prove that the log still extends a digest handed out earlier \
            (by 'jqc digest'). Exit status 1 when anything is wrong.
            """,
        group: "Auditing",
        options: [OptionSpec("digest", valueName: "DIGEST", help: "A digest from 'jqc digest' to check against.")])

    var digest: LedgerDigest?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        if let text = parsed.option("digest") {
            guard let digest = LedgerDigest(text) else {
                throw .invalidValue(
                    option: "digest", value: text, reason: "expected jqc-digest-v1:<position>:<64 hex digits>",
                    context: parsed.context)
            }
            self.digest = digest
        }
    }

    func run(_ invocation: Invocation) throws {
        // Read-only and without a session: an auditor verifies a copy.
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let report = try auditor.log.verify(against: digest) { done, total in
            invocation.progress("verifying \(done)/\(total)")
        }
        invocation.endProgress()
        if invocation.json {
            var object: [String: Any] = [
                "intact": report.isIntact, "checked": report.checked, "head": report.head.description,
                "digest": report.digest?.description as Any? ?? NSNull(),
            ]
            object["finding"] =
                report.finding.map { finding -> [String: Any] in
                    var object: [String: Any] = ["position": finding.position, "message": finding.description]
                    if let key = finding.key { object["key"] = key }
                    return object
                } ?? NSNull()
            invocation.stdout.line(JSONOutput.render(object))
        } else if report.isIntact {
            invocation.stdout.line("intact: \(report.checked) records verified, chain head \(report.head)")
            if let digest { invocation.stdout.line("extends the digest \(digest)") }
        }
        if let finding = report.finding {
            throw JQCError.verificationFailed("NOT INTACT: \(finding)")
        }
    }
}
