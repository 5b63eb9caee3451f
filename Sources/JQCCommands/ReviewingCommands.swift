import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

// MARK: - show

/// `jqc show ID`.
struct ShowCommand: RunnableCommand {
    static let path = ["show"]
    static let idArgument = PositionalSpec("ID", help: "The inspection (any unique prefix of its id).")
    static let spec = CommandSpec(
        "show", abstract: "Show an inspection: its form and answers, what is still required, score, issues, sync.",
        discussion: "Required fields are marked '*', and '!' while still empty.", group: "Reviewing",
        positionals: [idArgument])

    var id: String

    init(_ parsed: ParsedCommand) throws(UsageError) { id = try parsed.require(Self.idArgument) }

    func run(_ invocation: Invocation) throws {
        let state = try invocation.reading { ledger in
            guard let state = try ledger.state(of: try ledger.resolveInspection(id)) else {
                throw LookupError.noInspection(id)
            }
            return state
        }
        let report = FormReport(state: state)
        invocation.stdout.line(invocation.json ? JSONOutput.render(report) : report.text)
    }
}

// MARK: - Listings

/// `jqc inspections`, `jqc drafts`, `jqc followups`: they differ only in
/// their spec and in which view they read.
protocol InspectionListingCommand: RunnableCommand {
    static var listing: InspectionLedger.Listing { get }
    init()
}

extension InspectionListingCommand {
    init(_ parsed: ParsedCommand) throws(UsageError) { self.init() }

    func run(_ invocation: Invocation) throws {
        try InspectionListing.print(Self.listing, invocation)
    }
}

/// Prints a listing of inspection summaries, as a table or as JSON.
enum InspectionListing {
    static func print(_ listing: InspectionLedger.Listing, _ invocation: Invocation) throws {
        let summaries = try invocation.reading { try $0.summaries(listing) }.sorted {
            ($0.startedAt?.microsecondsSinceEpoch ?? 0) < ($1.startedAt?.microsecondsSinceEpoch ?? 0)
        }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(summaries))
            return
        }
        guard !summaries.isEmpty else {
            let what =
                switch listing {
                case .drafts: "No drafts."
                case .followUps: "No inspections need follow-up."
                case .all: "No inspections yet. Start one with 'jqc start'."
                }
            invocation.stdout.line(what)
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "STATUS", "TEMPLATE", "FACILITY", "STARTED", "SCORE", "SYNC"],
                rows: summaries.map { s in
                    [
                        String(s.id.lowercased.prefix(8)), s.status.rawValue, s.templateName,
                        s.facilityName + (s.areaName.map { " / \($0)" } ?? ""),
                        s.startedAt.map { String($0.iso8601.prefix(16)) } ?? "",
                        s.score.map { String(format: "%.2f", $0) } ?? "-", s.syncState.rawValue,
                    ]
                }))
    }
}

struct InspectionsCommand: InspectionListingCommand {
    static let path = ["inspections"]
    static let listing = InspectionLedger.Listing.all
    static let spec = CommandSpec(
        "inspections", abstract: "List the inspections on this device (discarded drafts are hidden).",
        group: "Reviewing")
}

struct DraftsCommand: InspectionListingCommand {
    static let path = ["drafts"]
    static let listing = InspectionLedger.Listing.drafts
    static let spec = CommandSpec("drafts", abstract: "List draft inspections.", group: "Reviewing")
}

struct FollowUpsCommand: InspectionListingCommand {
    static let path = ["followups"]
    static let listing = InspectionLedger.Listing.followUps
    static let spec = CommandSpec(
        "followups", abstract: "List completed inspections whose follow-up is still open.", group: "Reviewing")
}

/// `jqc issues`.
struct IssuesCommand: RunnableCommand {
    static let path = ["issues"]
    static let spec = CommandSpec(
        "issues", abstract: "List the issues flagged on this device.", group: "Reviewing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let rows = try invocation.reading { try $0.issues() }.sorted { $0.flaggedAt < $1.flaggedAt }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(rows))
            return
        }
        guard !rows.isEmpty else {
            invocation.stdout.line("No issues.")
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "SEVERITY", "FACILITY", "INSPECTION", "SYNC", "DESCRIPTION"],
                rows: rows.map { r in
                    [
                        String(r.id.lowercased.prefix(8)), r.severity.rawValue, r.facilityName,
                        String(r.inspectionID.lowercased.prefix(8)), r.syncState.rawValue, r.description,
                    ]
                }))
    }
}

/// `jqc outbox`.
struct OutboxCommand: RunnableCommand {
    static let path = ["outbox"]
    static let spec = CommandSpec(
        "outbox", abstract: "List what the server has not acknowledged, in the order sync sends it.",
        group: "Syncing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let items = try invocation.reading { try $0.outbox() }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(items))
            return
        }
        guard !items.isEmpty else {
            invocation.stdout.line("The outbox is empty: the server has everything.")
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["KIND", "ID", "INSPECTION", "STATE", "ATTEMPTS", "NEXT TRY", "LAST ERROR / WAITING FOR"],
                rows: items.map { i in
                    [
                        i.item.kind.rawValue, String(i.item.id.lowercased.prefix(8)),
                        String(i.inspectionID.lowercased.prefix(8)), i.state.rawValue, "\(i.attempts)",
                        i.nextAttemptAt.map { String($0.iso8601.prefix(19)) } ?? "-",
                        [i.lastError, i.detail].compactMap { $0 }.map(TerminalText.singleLine).joined(separator: "; "),
                    ]
                }))
    }
}

// MARK: - Reference data

/// `jqc pull --from FILE` (and, online, `jqc pull`).
struct PullCommand: RunnableCommand {
    static let path = ["pull"]
    static let from = OptionSpec("from", valueName: "FILE", help: "Import from this JSON file instead of the server.")
    static let spec = CommandSpec(
        "pull", abstract: "Refresh facilities and templates from the server, or import them from a file.",
        discussion: """
            The file holds {"facilities": [...], "templates": [...]} in the server's shapes. Reference data \
            is a cache: replacing it never touches recorded inspections, which keep the template they pinned. \
            A template this jqc cannot use is skipped and named; the rest is kept. A pull that would leave no \
            usable template, or leave out one a draft or an outstanding follow-up was started from, is \
            refused and the cache kept as it was (exit status 1).
            """,
        group: "Setup",
        options: [from])

    var file: String?

    init(_ parsed: ParsedCommand) throws(UsageError) { file = try parsed.value(of: Self.from) }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let snapshot: ReferenceCache.Snapshot
        let skipped: [String]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw JQCError.unreadableFile(file, "no such file, or not readable")
            }
            (snapshot, skipped) = try ReferenceCache.Snapshot.keepingUsable(json: try JSONValue(parsing: [UInt8](data)))
            for line in skipped { invocation.stderr.line("jqc: \(line)") }
        } else {
            (snapshot, skipped) = try invocation.pullFromServer()
        }
        // The counts are what the cache holds afterwards, not what was sent.
        let kept = try ledger.replaceReference(with: snapshot, skipped: skipped, at: invocation.clock.now())
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object(["facilities": .integer(kept.facilities), "templates": .integer(kept.templates)])))
        } else {
            invocation.stdout.line("Pulled \(kept.facilities) facilities and \(kept.templates) templates.")
        }
    }
}

/// `jqc facilities`.
struct FacilitiesCommand: RunnableCommand {
    static let path = ["facilities"]
    static let spec = CommandSpec(
        "facilities", abstract: "List the facilities and their areas (from the last pull).", group: "Setup")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let facilities = try invocation.reading { try $0.reference.allFacilities() }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(.array(facilities.map(\.jsonValue))))
            return
        }
        guard !facilities.isEmpty else {
            invocation.stdout.line("No facilities yet: run 'jqc pull' (or 'jqc pull --from FILE').")
            return
        }
        for facility in facilities {
            invocation.stdout.line(
                "\(facility.id.terminalSafe)  \(facility.name.terminalSafe)  (\(facility.address.terminalSafe))")
            for area in facility.areas {
                invocation.stdout.line(
                    "    \(area.id.terminalSafe)  \(area.name.terminalSafe)  [\(area.areaType.terminalSafe)]")
            }
        }
    }
}

/// `jqc templates` and `jqc templates show ID`.
struct TemplatesCommand: RunnableCommand {
    static let path = ["templates"]
    static let spec = CommandSpec(
        "templates", abstract: "List the templates (from the last pull); 'templates show ID' draws one.",
        group: "Setup")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let templates = try invocation.reading { try $0.reference.allTemplates() }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(.array(templates.map(\.listingJSON))))
            return
        }
        guard !templates.isEmpty else {
            invocation.stdout.line("No templates yet: run 'jqc pull' (or 'jqc pull --from FILE').")
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "NAME", "VERSION", "FIELDS"],
                rows: templates.map { [$0.id, $0.name, "\($0.version)", "\($0.fields.count)"] }))
    }
}

struct TemplatesShowCommand: RunnableCommand {
    static let path = ["templates", "show"]
    static let templateArgument = PositionalSpec("TEMPLATE", help: "The template's id or name.")
    static let spec = CommandSpec(
        "show", abstract: "Draw a template's form on its 12-column grid.", positionals: [templateArgument])

    var reference: String

    init(_ parsed: ParsedCommand) throws(UsageError) { reference = try parsed.require(Self.templateArgument) }

    func run(_ invocation: Invocation) throws {
        let template = try StartCommand.template(named: reference, in: invocation.ledger())
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(template.jsonValue))
        } else {
            invocation.stdout.line(TemplateGrid(template: template).text)
        }
    }
}

/// A template drawn as text: one line of boxes per grid row, each box as
/// wide as its column span.
struct TemplateGrid {
    let template: Template
    static let columnWidth = 7

    var text: String {
        var lines = [
            "\(template.name.terminalSafe) (template \(template.id.terminalSafe), version \(template.version))"
        ]
        // The cache only stores validated templates, but a ledger kept by
        // someone else may hold any layout: one outside the grid is described,
        // not drawn (its spans would overflow the arithmetic below).
        do {
            try template.validate()
        } catch {
            return (lines + ["cannot be drawn: \(error)"]).joined(separator: "\n").terminalSafe
        }
        let rows = Dictionary(grouping: template.fields, by: \.row).sorted { $0.key < $1.key }
        let ruler = "+" + String(repeating: "-", count: 12 * Self.columnWidth - 1) + "+"
        lines.append(ruler)
        for (_, fields) in rows {
            var line = ""
            var column = 1
            for field in fields.sorted(by: { $0.col < $1.col }) {
                if field.col > column {
                    line += "|" + String(repeating: " ", count: (field.col - column) * Self.columnWidth - 1)
                }
                let width = field.colSpan * Self.columnWidth - 1
                let name = field.label.terminalSafe
                var label = field.type.isDisplayOnly ? name : "\(field.required ? "*" : "")\(name)"
                if !field.type.isDisplayOnly { label += " [\(field.id.rawValue.terminalSafe):\(field.type.rawValue)]" }
                if label.count > width - 1 { label = String(label.prefix(width - 2)) + "…" }
                line += "|" + " " + label + String(repeating: " ", count: max(0, width - 1 - label.count))
                column = field.col + field.colSpan
            }
            if column <= 12 { line += "|" + String(repeating: " ", count: (13 - column) * Self.columnWidth - 1) }
            lines.append(line + "|")
            lines.append(ruler)
        }
        lines.append("* required; [id:type] is how 'jqc set' names a field.")
        return lines.joined(separator: "\n")
    }
}
