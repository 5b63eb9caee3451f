import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionUseCases

/// `jqc restore-point`: what the mark of a restored backup says
/// (`RestorePoint`, `restore-point.json`); `clear` confirms that this copy is
/// the only one recording when no witness could check it.
struct RestorePointCommand: CommandWithoutArguments {
    static let path = ["restore-point"]
    static let spec = CommandSpec(
        "restore-point", abstract: "Say whether this ledger is a restored backup not yet checked (restore-point.json).",
        discussion: """
            A backup made by 'jqc backup' is a restore point for this device, never a second device. Restored, \
            'jqc sync' first asks the configured witnesses what they cosigned of this device: more records than \
            this copy holds, or another root at a size it holds, means another copy recorded after the backup, \
            and the sync is refused. When no witness can be asked, that is said once; 'jqc restore-point clear' \
            then confirms that the ledger the backup was taken from no longer records.
            """,
        group: "Ledger")

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()
        let point = RestorePoint.load(invocation.home)
        let message =
            point.map {
                $0.warning.hasPrefix("warning: ") ? String($0.warning.dropFirst("warning: ".count)) : $0.warning
            }
            ?? "This ledger is not a restored backup waiting for a check."
        if invocation.json {
            invocation.printJSON(Self.json(point, message: message))
            return
        }
        invocation.stdout.line(message)
    }

    /// `jqc restore-point --json` (`restore_point` in `Schemas/cli/jqc-json.schema.json`).
    static func json(_ point: RestorePoint?, message: String) -> JSONValue {
        // found: a witness showed another copy recording; uncheckable: said once that no witness could check it.
        let state = point.map { $0.found != nil ? "found" : $0.uncheckable != nil ? "uncheckable" : "unchecked" }
        return .object([
            "restored_backup": .bool(point != nil), "state": .optional(state),
            "made_at": .optional(point.flatMap { $0.madeAt.isEmpty ? nil : $0.madeAt }),
            "records": point.map { .integer($0.records) } ?? .null, "found": .optional(point?.found),
            "message": .string(message),
        ])
    }
}

/// `jqc restore-point clear`.
struct RestorePointClearCommand: CommandWithoutArguments {
    static let path = ["restore-point", "clear"]
    static let spec = CommandSpec(
        "clear",
        abstract: "Confirm that the ledger this backup was restored from no longer records (removes the mark).",
        discussion: """
            Refused when a witness showed that another copy of this device recorded after the backup: clearing \
            the mark would not make this copy's history the device's (the witnesses would refuse it).
            """)

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()
        guard let point = RestorePoint.load(invocation.home) else {
            say(
                invocation, cleared: false,
                "This ledger is not a restored backup waiting for a check: nothing to clear.")
            return
        }
        if let found = point.found { throw JQCError.restoreMarkStays(found: found) }
        try RestorePoint.clear(invocation.home)
        say(
            invocation, cleared: true,
            "Confirmed: this ledger is the only copy of its device that records; it no longer warns before recording.")
    }

    /// The outcome as text, or with `--json` as `restore_point_clear` (`{cleared, message}`).
    func say(_ invocation: Invocation, cleared: Bool, _ message: String) {
        if invocation.json {
            invocation.printJSON(.object(["cleared": .bool(cleared), "message": .string(message)]))
        } else {
            invocation.stdout.line(message)
        }
    }
}
