import Dispatch
import LMDB
import LedgerCore
import Synchronization

/// What `verify` works out once the walk is done, on two threads: the
/// `event_ids` table's sum here, and on another thread the `stream_index`
/// table's sum and order (steps 3 to 5, `IndexSums`) and the map of the
/// walk's heads (step 8, `HeadMapInMemory`), which the walk's two threads
/// left this one to do one after the other.
///
/// The other thread reads in a read transaction of its own (an LMDB
/// transaction belongs to one thread), used only when it sees the very
/// snapshot `reader` sees (`Transaction.snapshot`). When it does not (a
/// writer committed in between, or `reader` is a write transaction) or no
/// log is given, the table is read here, after the other: the same result.
struct AfterWalk {
    var sums: IndexSums
    var order: IndexFinding?
    /// Whether `stream_index` was read on the other thread.
    var streamsReadBeside: Bool
    /// The map of the heads, or why it could not be built; nil when the
    /// store has no map to compare it with (`usableHeads`).
    var map: Result<HeadMapInMemory, HeadMapError>?

    static func work(_ reader: LedgerReader, beside log: EventLog?, heads: [StreamHead]) throws -> AfterWalk {
        let wantsMap = try reader.usableHeads() != nil
        let snapshot = reader.transaction.snapshot
        let other = Mutex<OtherThread?>(nil)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            var done = OtherThread()
            if let log {
                done.streams = Result {
                    try log.read { twin in
                        twin.transaction.snapshot == snapshot ? try IndexSums.ofStreamTable(twin) : nil
                    }
                }
            }
            if wantsMap { done.map = Result { () throws(HeadMapError) in try HeadMapInMemory(heads: heads) } }
            other.withLock { $0 = done }
        }
        // The thread is waited for even when this one fails: it reads the log.
        let ids = Result { try IndexSums.ofIDTable(reader) }
        group.wait()
        // `event_ids` fails first, as when the tables were read in turn.
        let idSums = try ids.get()
        let done = other.withLock { $0 } ?? OtherThread()
        // A failure there (no reader slot left, say) is not the verdict: the
        // table is read here, where any damage fails again.
        var twin: (sums: IndexSums, order: IndexFinding?)?
        if case .success(let read)? = done.streams { twin = read }
        let streams = try twin ?? IndexSums.ofStreamTable(reader)
        return AfterWalk(
            sums: IndexSums.joined(ids: idSums, streams: streams.sums), order: streams.order,
            streamsReadBeside: twin != nil, map: done.map)
    }

    /// What the other thread hands back.
    private struct OtherThread: Sendable {
        /// Nil inside: the other transaction saw another snapshot.
        var streams: Result<(sums: IndexSums, order: IndexFinding?)?, any Error>?
        var map: Result<HeadMapInMemory, HeadMapError>?
    }
}
