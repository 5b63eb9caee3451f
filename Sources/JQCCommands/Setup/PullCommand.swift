import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc pull --from FILE` (and, online, `jqc pull`).
struct PullCommand: RunnableCommand {
    static let path = ["pull"]
    static let from = OptionSpec("from", valueName: "FILE", help: "Import from this JSON file instead of the server.")
    static let add = FlagSpec(
        "add",
        help: "With --from: add the file's facilities and templates to the cache (replacing those of the same id) "
            + "instead of replacing the whole cache.")
    static let clear = FlagSpec(
        "clear", help: "Empty the reference cache instead (offline); recorded inspections keep their templates.")
    static let spec = CommandSpec(
        "pull", abstract: "Refresh facilities and templates from the server, or import them from a file.",
        discussion: """
            The file holds {"facilities": [...], "templates": [...]} in the server's shapes. Reference data \
            is a cache: replacing it never touches recorded inspections, which keep the template they pinned. \
            A template this jqc cannot use is skipped and named; the rest is kept. A pull that would leave no \
            usable template, or leave out one a draft or an outstanding follow-up was started from, is \
            refused and the cache kept as it was (exit status 1). With --add, the file's facilities and \
            templates join those already cached (one of the same id is replaced), so one new template can be \
            imported on a ledger with drafts: {"facilities": [], "templates": [TEMPLATE]}.
            """,
        group: "Setup",
        options: [from], flags: [add, clear])

    var file: String?
    var clearing: Bool
    var adding: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        file = try parsed.value(of: Self.from)
        clearing = try parsed.isSet(Self.clear)
        adding = try parsed.isSet(Self.add)
        if adding, file == nil {
            throw parsed.unexpected(
                Self.add, "without \(Self.from.spelling) FILE (a server pull refreshes the whole cache)")
        }
        if adding, clearing { throw parsed.unexpected(Self.add, "with \(Self.clear.spelling)") }
        if clearing, file != nil {
            throw parsed.unexpected(Self.from, "with \(Self.clear.spelling) (it empties the cache, importing nothing)")
        }
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        if clearing {
            let held = try ledger.reference.clear()
            if invocation.json {
                invocation.printJSON(
                    .object([
                        "cleared": .bool(true), "facilities": .integer(held.facilities),
                        "templates": .integer(held.templates),
                    ]))
            } else {
                invocation.stdout.line(
                    "Cleared the reference cache (\(held.facilities) facilities, \(held.templates) templates). "
                        + "Recorded inspections keep the templates they pinned; 'jqc pull' fetches them again.")
            }
            return
        }
        let snapshot: ReferenceCache.Snapshot
        let skipped: [String]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw JQCError.unreadableFile(file, "no such file, or not readable")
            }
            let (read, readSkipped) = try ReferenceCache.Snapshot.keepingUsable(
                json: try JSONValue(parsing: [UInt8](data)))
            skipped = readSkipped
            for line in skipped { invocation.stderr.line("jqc: \(line)") }
            snapshot =
                adding
                ? ReferenceCache.Snapshot(
                    facilities: try ledger.reference.allFacilities(), templates: try ledger.reference.allTemplates()
                ).adding(read) : read
        } else {
            (snapshot, skipped) = try invocation.pullFromServer()
        }
        // The counts are what the cache holds afterwards, not what was sent.
        let kept = try ledger.replaceReference(with: snapshot, skipped: skipped, at: invocation.clock.now())
        if invocation.json {
            invocation.printJSON(
                .object(["facilities": .integer(kept.facilities), "templates": .integer(kept.templates)]))
        } else {
            invocation.stdout.line("Pulled \(kept.facilities) facilities and \(kept.templates) templates.")
        }
    }
}
