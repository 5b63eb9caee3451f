import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// Issue #22: a shared inspection's handover files grew geometrically (each
/// reception embedded the bytes of what it carried, receptions included).
/// With `inspection.received` version 2 and `jqc-handover/2` the records
/// travel once each, by leaf hash, with their bytes beside the payload.
@Suite struct SharedFileSizeTests {
    typealias Device = HandoverUseCaseTests.Device

    /// Shares `id` from `from` to `to` (the file is kept under `name`);
    /// answers the file's bytes.
    @discardableResult
    static func share(_ id: UUID, from: Device, to: Device, name: String) throws -> [UInt8] {
        let path = from.temporary.appending(name)
        _ = try Handover(ledger: from.ledger, identity: from.identity).write(
            inspection: id, to: nil, mode: .share, output: path, actor: from.actor, clock: from.clock)
        let received = try Reception(ledger: to.ledger, device: to.device).receive(
            file: path, actor: to.actor, clock: to.clock)
        #expect(received.recorded, "\(name) recorded nothing")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Two devices, `trips` round trips of shared files, one answer per side
    /// per trip: the sizes of the files in order, and the devices.
    static func exchange(trips: Int) throws -> (sizes: [Int], ana: Device, ben: Device, id: UUID, last: [UInt8]) {
        let ana = try Device(actor: "Ana")
        let ben = try Device(actor: "Ben")
        let id = try ana.startInspection()
        var sizes: [Int] = []
        var last: [UInt8] = []
        last = try share(id, from: ana, to: ben, name: "start.json")
        sizes.append(last.count)
        for trip in 1...trips {
            try ben.record([.setField(field: "Floors", to: .text(String(trip % 5 + 1)))], on: id)
            last = try share(id, from: ben, to: ana, name: "b\(trip).json")
            sizes.append(last.count)
            try ana.record([.setField(field: "Floors", to: .text(String((trip + 2) % 5 + 1)))], on: id)
            last = try share(id, from: ana, to: ben, name: "a\(trip).json")
            sizes.append(last.count)
        }
        return (sizes, ana, ben, id, last)
    }

    @Test func tenRoundTripsGrowTheFilesByABoundedStepAndKeepEachRecordOnce() throws {
        let (sizes, ana, ben, id, _) = try Self.exchange(trips: 10)
        // What a file adds is what the trip recorded (two answers, two
        // handovers, two receptions) plus each new reception's references,
        // one per record of its sender's stream with its inclusion proof: so
        // the step grows at most linearly with the trips (the files
        // quadratically, with a small factor). The bound: file n adds at
        // most 2 × the first step + n × a quarter of it. The old nesting
        // (each reception embedding the ones before, ×2.6 a round trip)
        // broke it by the sixth file; these hold it with room to spare.
        let step = sizes[2] - sizes[1]
        #expect(step > 0)
        for index in 2..<sizes.count {
            let bound = 2 * step + index * step / 4
            #expect(
                sizes[index] - sizes[index - 1] <= bound,
                "file \(index) adds \(sizes[index] - sizes[index - 1]) bytes, more than \(bound): \(sizes)")
        }
        // And the nesting is gone: the old growth would have made the last
        // of these 21 files megabytes (×2.6 a round trip from the first).
        #expect(sizes[sizes.count - 1] < 100 * sizes[0], "\(sizes)")
        // Both show the same form.
        let a = try #require(try ana.ledger.state(of: id))
        let b = try #require(try ben.ledger.state(of: id))
        #expect(a.values == b.values && a.status == b.status && !a.values.isEmpty)
        for device in [ana, ben] {
            try device.ledger.log.read { reader in
                // The audit's proof of every reception holds.
                var referenced: Set<Digest256> = []
                let held = ReceivedProof.Held(templateHash: a.templateHash) { try? reader.carriedRecord($0) }
                var continued = 0
                for record in try reader.records(inStream: id) where record.type == "inspection.received" {
                    #expect(record.schemaVersion == 3)
                    guard case .received(let received) = try CarriedClosure.event(of: record, reader: reader) else {
                        continue
                    }
                    #expect(try ReceivedProof.verify(received, inspection: id, held: held) > 0)
                    if received.continues != nil { continued += 1 }
                    referenced.formUnion(received.carried.leaves)
                    // The reception's own bytes hold no other record's.
                    #expect(record.payload.count < 400 * received.records.count + 4_000)
                }
                // The `carried` table holds each record once: its entries
                // are exactly the leaves the receptions reach.
                var keys: Set<Digest256> = []
                try reader.forEachCarried { key, value in
                    #expect(CarriedRecords.leaf(of: value).bytes == key)
                    keys.insert(CarriedRecords.leaf(of: value))
                    return true
                }
                #expect(try reader.carriedCount() == keys.count)
                #expect(keys == referenced)
                // Every reception after the first of each sender continues.
                #expect(continued >= 9, "\(continued) receptions continue an earlier one")
            }
        }
    }

    /// The bytes a device's ledger holds of `id`: its stream's records and
    /// the whole `carried` table (the test's ledgers hold nothing else).
    static func heldBytes(_ device: Device, _ id: UUID) throws -> Int {
        try device.ledger.log.read { reader in
            var total = try reader.records(inStream: id).reduce(0) { $0 + $1.encoded().count }
            try reader.forEachCarried { _, value in
                total += value.count
                return true
            }
            return total
        }
    }

    /// Growth is linear (#30 item 7): `inspection.received` version 3 keeps
    /// only what is new to the receiver, so the file after 40 exchanges is
    /// at most 4.5 × the file after 10 (version 2: 8.6 ×), and what the
    /// receiving ledger adds per exchange stays flat.
    @Test func fortyExchangesGrowTheFileLinearlyAndTheReceiverByAFlatStep() throws {
        let ana = try Device(actor: "Ana")
        let ben = try Device(actor: "Ben")
        let id = try ana.startInspection()
        var sizes: [Int] = []
        var benGrowth: [Int] = []
        var benHeld = 0
        for exchange in 1...40 {
            let (from, to) = exchange % 2 == 1 ? (ana, ben) : (ben, ana)
            try from.record([.setField(field: "Floors", to: .text(String(exchange % 5 + 1)))], on: id)
            sizes.append(try Self.share(id, from: from, to: to, name: "e\(exchange).json").count)
            if exchange % 2 == 1 {
                let held = try Self.heldBytes(ben, id)
                benGrowth.append(held - benHeld)
                benHeld = held
            }
        }
        #expect(
            Double(sizes[39]) <= 4.5 * Double(sizes[9]), "file 40 \(sizes[39]) bytes, file 10 \(sizes[9]): \(sizes)")
        // Flat: a late exchange adds at most twice what an early one did
        // (the first reception, which takes the whole copy, left out).
        let early = benGrowth[2..<5].max() ?? 0
        let late = benGrowth[15..<20].max() ?? 0
        #expect(early > 0 && late <= 2 * early, "bytes the receiver added per exchange: \(benGrowth)")
        let a = try #require(try ana.ledger.state(of: id))
        let b = try #require(try ben.ledger.state(of: id))
        #expect(a.values == b.values && a.status == b.status && !a.values.isEmpty)
    }

    /// The last file, its `carried_records` changed one way or another, and
    /// whether a refusal is the one that change calls for.
    static let tamperings:
        [(String, @Sendable (inout [JSONValue]) throws -> Void, @Sendable (BundleUnreadable) -> Bool)] = [

            (
                "an entry's byte changed",
                { entries in
                    guard case .string(let text)? = entries[0]["record"],
                        var bytes = Data(base64Encoded: text).map(Array.init)
                    else {
                        throw CocoaError(.coderReadCorrupt)
                    }
                    bytes[bytes.count / 2] ^= 0x01
                    entries[0] = entries[0].setting("record", .string(Data(bytes).base64EncodedString()))
                },
                {
                    if case .wrongHash("carried_records[0].record", .leaf, _) = $0 { true } else { false }
                }
            ),
            (
                "an entry removed", { entries in entries.remove(at: entries.count / 2) },
                {
                    if case .carriedRecordsIncomplete = $0 { true } else { false }
                }
            ),
            (
                "an entry nobody references added",
                { entries in
                    let bytes: [UInt8] = [0xA0]
                    let leaf = CarriedRecords.leaf(of: bytes).hex
                    let entry = JSONValue.object([
                        .init("leaf", .string(leaf)), .init("record", .string(Data(bytes).base64EncodedString())),
                    ])
                    let index = entries.firstIndex {
                        if case .string(let other)? = $0["leaf"] { other > leaf } else { false }
                    }
                    entries.insert(entry, at: index ?? entries.count)
                },
                { $0 == .unreferencedLeaf(leaf: CarriedRecords.leaf(of: [0xA0]).hex) }
            ),
            (
                "an entry duplicated", { entries in entries.insert(entries[1], at: 1) },
                {
                    if case .repeatedEntry("carried_records[2]", .leaf, _) = $0 { true } else { false }
                }
            ),
        ]

    @Test(arguments: tamperings.indices)
    func aChangedCarriedRecordsIsRefusedWithNothingRecorded(index: Int) throws {
        let (_, ana, _, id, _) = try Self.exchange(trips: 2)
        let ben = try Device(actor: "Cleo")
        try ana.record([.setField(field: "Floors", to: .text("2"))], on: id)
        let path = ana.temporary.appending("tampered.json")
        _ = try Handover(ledger: ana.ledger, identity: ana.identity).write(
            inspection: id, to: nil, mode: .share, output: path, actor: ana.actor, clock: ana.clock)
        var json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        guard case .array(var entries)? = json["carried_records"] else { throw CocoaError(.coderReadCorrupt) }
        #expect(entries.count > 2)
        try Self.tamperings[index].1(&entries)
        json = json.setting("carried_records", .array(entries))
        try Data((json.sortingKeys().prettyPrinted() + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let before = try ben.recordCount()
        let refusal = #expect(throws: HandoverFile.Unreadable.self, "\(Self.tamperings[index].0)") {
            try Reception(ledger: ben.ledger, device: ben.device).receive(
                file: path, actor: ben.actor, clock: ben.clock)
        }
        if case .strict(let reason)? = refusal {
            #expect(Self.tamperings[index].2(reason), "\(Self.tamperings[index].0): \(reason)")
        } else {
            Issue.record("\(Self.tamperings[index].0): \(String(describing: refusal))")
        }
        #expect(try ben.recordCount() == before)
    }
}

extension JSONValue {
    /// The object with member `key` replaced by `value`.
    fileprivate func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self, let index = members.firstIndex(where: { $0.key == key }) else {
            return self
        }
        members[index].value = value
        return .object(members)
    }
}
