import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// Why `jqc edit` stopped without recording.
public enum EditError: Error, Equatable, CustomStringConvertible {
    case editorFailed(command: String, status: Int32)
    /// Editing stopped without recording anything.
    case abandoned(Abandonment)
    case malformedLine(number: Int, text: String)

    /// Why editing stopped without recording anything.
    public enum Abandonment: Equatable, Sendable {
        /// The document came back unchanged after a refusal.
        case savedUnchangedAfterRefusal
        /// Refused `times` times in a row (`FormEditing.mostRefusals`).
        case refusedInARow(times: Int)
    }

    public var description: String {
        switch self {
        case .editorFailed(let command, let status):
            "the editor ('\(TerminalText.singleLine(command))') exited with status \(status); nothing was recorded. "
                + "Set VISUAL or EDITOR to an editor that exits with 0 after saving."
        case .abandoned(.savedUnchangedAfterRefusal):
            "the document was saved unchanged after the refusal; nothing was recorded."
        case .abandoned(.refusedInARow(let times)): "refused \(times) times in a row; nothing was recorded."
        case .malformedLine(let number, let text):
            "line \(number) (\(TerminalText.singleLine(text))) is not '[ID] LABEL = VALUE' and not a comment"
        }
    }
}

/// `jqc edit`'s round trip: the form written for an editor, read back,
/// and its changed answers recorded together; a refusal (a malformed line,
/// a refused answer) reopens the editor with the reasons on top, until the
/// answers are accepted, the document comes back unchanged after a
/// refusal, or 20 refusals in a row.
public struct FormEditing {
    public let document: FormDocument
    /// Refusals in a row after which editing stops.
    public static let mostRefusals = 20

    public init(document: FormDocument) { self.document = document }

    public enum Outcome {
        /// No answer changed; nothing was recorded.
        case unchanged
        /// What was recorded, and the inspection after it.
        case recorded([InspectionEvent], InspectionState)
    }

    /// Edits until accepted: `editor` is handed the text and answers it as
    /// saved; `record` records the commands of the changed lines, all or
    /// none; `refused` is told before the editor opens again.
    public func edit(
        in editor: (String) throws -> String, record: ([InspectionCommand]) throws -> InspectionLedger.Recorded,
        refused: () -> Void
    ) throws -> Outcome {
        var text = document.text
        var lastRefused: String?
        for _ in 0..<Self.mostRefusals {
            let content = FormDocument.withoutRefusals(try editor(text))
            if let lastRefused, content == lastRefused {
                throw EditError.abandoned(.savedUnchangedAfterRefusal)
            }
            do {
                let commands = try document.commands(from: content)
                guard !commands.isEmpty else { return .unchanged }
                let (events, after) = try record(commands)
                return .recorded(events, after)
            } catch let error as EditError {
                guard case .malformedLine = error else { throw error }
                text = FormDocument.withRefusals([error.description], content)
            } catch let error as RecordingError {
                guard case .batchRefused(_, let refusals, _) = error else { throw error }
                text = FormDocument.withRefusals(refusals.map(\.description), content)
            } catch let error as DomainError {
                text = FormDocument.withRefusals([error.description], content)
            }
            lastRefused = content
            refused()
        }
        throw EditError.abandoned(.refusedInARow(times: Self.mostRefusals))
    }
}
