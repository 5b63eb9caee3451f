import FoundationEssentials
import InspectionDomain
import LedgerCore
import SyncWorker

extension SyncService.Pass {
    /// What `jqc sync` ends with when something failed for good.
    public static let failedForGoodAdvice =
        "Some items failed for good (listed above). See 'jqc outbox'; send them again with "
        + "'jqc sync retry ID' once the cause is fixed."

    /// Why `jqc sync` ends this pass with exit status 1, in its words; nil
    /// when it succeeded. In order: a witness's alarm (a refusal, a wrong
    /// answer, a fork or a bad cosignature in a round), a refused session
    /// or an unusable server, an item failed for good: what `jqc sync`
    /// fails on when it makes the pass itself, so a pass the background
    /// sync makes for it ends with the same exit status.
    public var failure: String? {
        if let witness, witness.isAlarm { return TerminalText.singleLine(witness.description) }
        switch report.stop {
        case .loginRequired(let why), .transportRefused(let why): return why
        case .serverUnreachable, .interrupted, nil: break
        }
        return report.needsAttention ? Self.failedForGoodAdvice : nil
    }

    /// The witness step's lines under the summary, as `jqc sync` prints
    /// them: a round's one per witness and the quorum, any other outcome
    /// one line; none for an alarm other than a round's, which is the
    /// pass's `failure` instead.
    public var witnessLines: [String] {
        guard let witness else { return [] }
        if case .cosigning = witness { return witness.lines.map { "  " + TerminalText.singleLine($0) } }
        return witness.isAlarm ? [] : ["  " + TerminalText.singleLine(witness.description)]
    }
}

extension SyncService.Answer {
    /// What `jqc sync` would print of `pass` (`summary`, then the
    /// witness's lines) and end with, for the background sync to hand to a
    /// `jqc sync` that asked it for the pass; `document` is what `jqc sync
    /// --json` prints of it.
    public init(_ pass: SyncService.Pass, summary: SyncSummary, document: JSONValue) {
        self.init(
            lines: summary.lines + pass.witnessLines, warnings: summary.warnings, failure: pass.failure,
            document: document)
    }
}
