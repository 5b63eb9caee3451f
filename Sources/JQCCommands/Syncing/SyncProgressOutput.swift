import FoundationEssentials
import InspectionDomain
import LedgerCore
import SyncWorker

/// What `jqc sync` shows while it runs (`--progress`).
enum SyncProgressMode: String, CaseIterable {
    /// One line redrawn on standard error when it is a terminal (counts and
    /// the current item); nothing when piped.
    case auto
    /// Nothing.
    case none
    /// One JSON object per step on standard error, terminal or not, for scripts.
    case json
}

/// Draws a run's progress: the counts so far and the item at hand.
///
/// Told about each step by the `SyncRun` on the thread that runs the sync,
/// in the order its workers decided them (`ProgressQueue`), so the steps
/// of concurrent requests arrive one at a time, in order.
final class SyncProgressOutput {
    let mode: SyncProgressMode
    let invocation: Invocation
    private var sent = 0
    private var retrying = 0
    private var failed = 0
    private var total = 0
    private var finished: Set<SyncItem> = []

    init(mode: SyncProgressMode, invocation: Invocation) {
        self.mode = mode
        self.invocation = invocation
    }

    func show(_ progress: SyncProgress) {
        total = max(total, progress.total)
        switch progress.step {
        case .sent:
            if finished.insert(progress.item).inserted { sent += 1 }
        case .willRetry:
            if finished.insert(progress.item).inserted { retrying += 1 }
        case .gaveUp:
            if finished.insert(progress.item).inserted { failed += 1 }
        case .lookingUp, .sending, .waiting:
            break
        }
        switch mode {
        case .none: return
        case .json: invocation.stderr.line(json(progress).serialized())
        case .auto: invocation.progress(line(progress))
        }
    }

    /// `sync 5/12 (sent 4, retrying 1) · inspection 3d15a2b0: sending`
    func line(_ progress: SyncProgress) -> String {
        var counts = "sent \(sent)"
        if retrying > 0 { counts += ", retrying \(retrying)" }
        if failed > 0 { counts += ", failed \(failed)" }
        let what = "\(progress.item.kind.rawValue) \(progress.item.id.lowercased.prefix(8))"
        let step: String
        switch progress.step {
        case .lookingUp: step = "looking it up on the server before sending it again"
        case .sending: step = "sending"
        case .sent(let detail): step = "sent (\(detail))"
        case .willRetry(let why): step = "will retry (\(TerminalText.singleLine(String(why.prefix(60)))))"
        case .gaveUp(let why): step = "failed (\(TerminalText.singleLine(String(why.prefix(60)))))"
        case .waiting(let why): step = TerminalText.singleLine(why)
        }
        return "sync \(sent + retrying + failed)/\(total) (\(counts)) · \(what): \(step)"
    }

    /// One event, on one line: `{"event": "sent", "kind": "photo", …}`.
    func json(_ progress: SyncProgress) -> JSONValue {
        let (event, detail): (String, String?) =
            switch progress.step {
            case .lookingUp: ("looking_up", nil)
            case .sending: ("sending", nil)
            case .sent(let detail): ("sent", detail)
            case .willRetry(let why): ("will_retry", why)
            case .gaveUp(let why): ("failed", why)
            case .waiting(let why): ("waiting", why)
            }
        func count(_ n: Int) -> JSONValue { .integer(Int64(n)) }
        return .object([
            .init("event", .string(event)), .init("kind", .string(progress.item.kind.rawValue)),
            .init("id", .string(progress.item.id.lowercased)),
            .init("inspection_id", .string(progress.inspectionID.lowercased)),
            .init("detail", detail.map(JSONValue.string) ?? .null), .init("done", count(sent + retrying + failed)),
            .init("total", count(total)), .init("sent", count(sent)), .init("retrying", count(retrying)),
            .init("failed", count(failed)),
        ])
    }
}
