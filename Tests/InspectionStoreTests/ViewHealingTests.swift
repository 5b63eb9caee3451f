import Foundation
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionStore

/// `InspectionLedger.heal`: the one retry of a damaged view. A reader hands
/// the damage it met to a writer's `heal` and reads once more; the view is
/// rebuilt once, announced once.
@Suite struct ViewHealingTests {
    let directory = TemporaryDirectory(prefix: "view-healing")

    @Test func aReadersDamageIsHealedOnceByTheWriterAndReadAgain() throws {
        let recorder = try Recorder(directory: directory)
        let id = try recorder.start(template: "11")
        let expected = try #require(try recorder.ledger.summary(of: id))
        try ViewIntegrityTests.flip(TableName.View.inspections.name, key: id.bytes, in: recorder.ledger)
        recorder.ledger.close()

        var options = Environment.Options()
        options.readOnly = true
        let reader = try InspectionLedger(
            storePath: directory.appending("store"), photosPath: directory.path, options: options)
        let damage = try #require(
            #expect(throws: ViewDamage.self) { try reader.summaries() })
        // A reader cannot heal: its heal is the damage again.
        #expect(throws: damage) { try reader.heal(damage) }
        reader.close()

        let notices = Locked<[String]>([])
        let writer = try InspectionLedger(
            storePath: directory.appending("store"), photosPath: directory.path,
            notice: { message in notices.withLock { $0.append(message) } })
        defer { writer.close() }
        try writer.heal(damage)
        #expect(try writer.summaries() == [expected])
        #expect(notices.value.count == 1, "\(notices.value)")
        #expect(notices.value.first?.hasSuffix("rebuilding it from the log…") == true)
    }
}
