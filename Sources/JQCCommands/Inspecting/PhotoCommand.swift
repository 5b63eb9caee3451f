import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc photo ID FIELD FILE` or `jqc photo --issue ISSUE FILE`.
struct PhotoCommand: RunnableCommand {
    static let path = ["photo"]
    static let idArgument = PositionalSpec("ID", help: "The inspection (omit with --issue).", optional: true)
    static let fieldArgument = PositionalSpec(
        "FIELD", help: "The image field's id or label (omit with --issue).", optional: true)
    static let fileArgument = PositionalSpec("FILE", help: "The image file.")
    static let issue = OptionSpec("issue", valueName: "ISSUE", help: "Attach the photo to this issue instead.")
    static let spec = CommandSpec(
        "photo", abstract: "Capture a photo into an image field, or onto an issue.",
        discussion: """
            The file is copied into the ledger's photo store and named by its SHA-256; the log records \
            the hash, never the path. JPEG, PNG, GIF, WebP and HEIC images are accepted.
            """,
        group: "Inspecting",
        positionals: [idArgument, fieldArgument, fileArgument], options: [issue])

    var id: String?
    var field: String?
    var file: String
    var issue: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        file = try parsed.require(Self.fileArgument)
        id = try parsed.value(of: Self.idArgument)
        field = try parsed.value(of: Self.fieldArgument)
        issue = try parsed.value(of: Self.issue)
        if issue == nil {
            if id == nil { throw parsed.missing(Self.idArgument) }
            if field == nil { throw parsed.missing(Self.fieldArgument) }
        } else if let id {
            throw .unexpectedArgument(id, context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let inspection: UUID
        let target: PhotoTarget
        if let issue {
            let row = try invocation.ledger().resolveIssue(issue)
            inspection = row.inspectionID
            target = .issue(row.id)
        } else {
            guard let id, let field else { preconditionFailure("init requires ID and FIELD without --issue") }
            inspection = try invocation.inspectionID(id)
            try invocation.requireField(field, of: inspection, holding: .image)
            target = .field(field)
        }
        let (events, state) = try invocation.capture(file, for: target, on: inspection)
        report(events, state, invocation, verb: "captured")
    }
}
