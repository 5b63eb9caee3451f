import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// The map of stream heads' catch-up (`EventLog.catchUpHeadMap`) killed
/// with SIGKILL in the middle: it is one write transaction, so the map is
/// left all or nothing, and the next writable open catches up correctly.
/// The victim is the `ledger-writer` executable asked to write nothing: its
/// writable open is the catch-up and no other write.
@Suite struct HeadMapCatchUpKillTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    func write(batches: Int, size: Int, name: String) throws {
        let result = try ProcessRun.run(
            Products.executable("ledger-writer"), [store, "\(batches)", "\(size)", name])
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// The log's size and how far the map is behind, through a read-only open.
    func state() throws -> (size: UInt64, lag: HeadMapLag?, report: VerificationReport) {
        var options = Environment.Options()
        options.readOnly = true
        let log = try EventLog(directory: store, options: options)
        defer { log.close() }
        let (size, lag) = try log.read { reader in (try reader.treeSize(), try reader.headMapLag()) }
        return (size, lag, try log.verify())
    }

    /// The thread that holds the store's LMDB writer mutex, 0 when none:
    /// `lock.mdb` holds the reader table's header in its first cache line
    /// (64 bytes) and the writer's robust pthread mutex next, whose first
    /// word is the owner's thread id while it is locked (glibc).
    func writerLockOwner() -> Int32 {
        guard let data = FileManager.default.contents(atPath: store + "/lock.mdb"), data.count >= 68 else { return 0 }
        let word = data[data.startIndex + 64..<data.startIndex + 68].enumerated().reduce(UInt32(0)) { value, byte in
            value | UInt32(byte.element) << (8 * UInt32(byte.offset))
        }
        return Int32(bitPattern: word & 0x3FFF_FFFF)
    }

    @Test func aKillDuringTheCatchUpLeavesTheMapAllOrNothingAndTheNextOpenCatchesUp() throws {
        try write(batches: 2, size: 50, name: "first")
        let mapSize = try state().size
        // Records appended as by a jqc older than the map: 4 streams, a lag of
        // 8 000 records, so the catch-up's transaction lasts long enough to be seen.
        try HeadMapSurgery.recordingAsOlderJQC(store: store) {
            for index in 0..<4 { try write(batches: 2, size: 1_000, name: "older-\(index)") }
        }
        let before = try state()
        let logSize = before.size
        #expect(before.lag == HeadMapLag(mapSize: mapSize, logSize: logSize))
        #expect(before.report.isIntact, "\(String(describing: before.report.finding))")

        let victim = Process()
        victim.executableURL = URL(fileURLWithPath: Products.executable("ledger-writer"))
        victim.arguments = [store, "0", "1", "victim"]
        victim.standardOutput = FileHandle.nullDevice
        try victim.run()
        // Killed once it holds the writer lock: inside the catch-up's transaction.
        var inside = false
        var looks = 0
        while !inside, victim.isRunning, looks < 1_000_000 {
            inside = writerLockOwner() == victim.processIdentifier
            looks += 1
        }
        kill(victim.processIdentifier, SIGKILL)
        victim.waitUntilExit()
        #expect(inside, "the victim never held the writer lock while it ran")
        #expect(victim.terminationReason == .uncaughtSignal)

        // All or nothing: still behind at exactly the old size (nothing of
        // the transaction kept), and what it holds is whole.
        let after = try state()
        #expect(after.size == logSize)
        #expect(after.lag == HeadMapLag(mapSize: mapSize, logSize: logSize), "\(String(describing: after.lag))")
        #expect(after.report.isIntact, "\(String(describing: after.report.finding))")

        // The next writable open catches up: the map of every record, as built afresh.
        let log = try EventLog(directory: store)
        let (lag, stored, fresh) = try log.read { reader in
            (try reader.headMapLag(), try reader.headMapRoot(), try reader.headMap(size: try reader.treeSize()).root)
        }
        let report = try log.verify()
        log.close()
        #expect(lag == nil)
        #expect(stored == fresh)
        #expect(report.isIntact && report.headMapLag == nil, "\(String(describing: report.finding))")
    }
}
