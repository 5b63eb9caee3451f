import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionUseCases
import LedgerCore
import LedgerStore

// MARK: - digest

/// `jqc digest`: the current head, to hand to someone who will check later.
struct DigestCommand: CommandWithoutArguments {
    static let path = ["digest"]
    static let spec = CommandSpec(
        "digest", abstract: "Print the log's digest (position and chain hash) to check it against later.",
        discussion: """
            The digest is handed out only after its last record's chain link is recomputed from the \
            record before it; when that fails, nothing is printed and the exit status is 1.
            """,
        group: "Auditing")

    func run(_ invocation: Invocation) throws {
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let head: LedgerDigest
        do {
            head = try auditor.log.read { try $0.verifiedHead() }
        } catch let error as HeadCheckError {
            throw JQCError.verificationFailed("NOT INTACT: \(error)")
        }
        if invocation.json {
            invocation.printJSON(head)
        } else {
            invocation.stdout.line(head.description)
        }
    }
}
