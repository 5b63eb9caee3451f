import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// The merge's rules one at a time, over two simulated devices
/// (`MergePropertyTests.Device`): causality beats clocks, a carried handover
/// or submit never makes another device stop or send, a conflict is settled
/// by a write that follows it.
@Suite struct MergeRulesTests {
    typealias Device = MergePropertyTests.Device

    /// A started on device 0, shared to B (device 1, `skew` off, folding with
    /// `merge`), received.
    static func sharedPair(
        skew: Int64 = 0, merge: FieldMerge = .latest
    ) throws -> (a: Device, b: Device, template: Template, now: Int64) {
        let template = try Samples.restroom()
        var a = Device(0, skew: 0, merge: .latest)
        var b = Device(1, skew: skew, merge: merge)
        let now = Samples.start.microsecondsSinceEpoch
        a.run(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: false, facilityID: "3", facilityName: "Harbor Tower")),
            at: now)
        a.run(.setField(field: "2", to: .text("2")), at: now + 1_000_000)
        a.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        let done1 = try b.receive(try a.file, at: now + 3_000_000, template: template)
        #expect(done1)
        return (a, b, template, now + 4_000_000)
    }

    @Test func anAnswerRecordedAfterAReceptionWinsWhateverTheClockSays() throws {
        // B's clock is an hour behind: its answer carries an earlier time.
        var (a, b, template, now) = try Self.sharedPair(skew: -3_600_000_000)
        b.run(.setField(field: "2", to: .text("5")), at: now)
        a.run(.handOver(mode: .share, to: nil), at: now + 1_000_000)
        let done2 = try a.receive(try b.file, at: now + 2_000_000, template: template)
        #expect(done2)
        #expect(a.state.values["2"] == .rating(5))
        #expect(a.state.conflicts.isEmpty)
        #expect(b.state.values["2"] == .rating(5))
    }

    @Test func aConflictShowsBothAndALaterWriteSettlesIt() throws {
        var (a, b, template, now) = try Self.sharedPair()
        a.run(.setField(field: "2", to: .text("3")), at: now)
        b.run(.setField(field: "2", to: .text("4")), at: now + 1_000_000)
        a.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        let done3 = try b.receive(try a.file, at: now + 3_000_000, template: template)
        #expect(done3)
        let conflict = try #require(b.state.conflicts.first)
        #expect(conflict.writes.map(\.value) == [.rating(4), .rating(3)])
        #expect(b.state.values["2"] == .rating(4))
        // Setting the standing value again settles it.
        let done4 = b.run(.setField(field: "2", to: .text("4")), at: now + 4_000_000)
        #expect(done4)
        #expect(b.state.conflicts.isEmpty)
    }

    @Test func aCarriedHandoverNeverStopsTheReceiverAndAReceptionGivesTheRightBack() throws {
        var (a, b, template, now) = try Self.sharedPair()
        let handed = a.run(.handOver(mode: .handover, to: "Ben"), at: now)
        #expect(handed && a.state.isHandedAway)
        let received = try b.receive(try a.file, at: now + 1_000_000, template: template)
        #expect(received && !b.state.isHandedAway)
        let recorded = b.run(.setField(field: "3", to: .text("4")), at: now + 2_000_000)
        #expect(recorded)
        b.run(.handOver(mode: .share, to: nil), at: now + 3_000_000)
        let back = try a.receive(try b.file, at: now + 4_000_000, template: template)
        #expect(back && !a.state.isHandedAway)
        let again = a.run(.setField(field: "4", to: .text("1")), at: now + 5_000_000)
        #expect(again)
    }

    @Test func aSubmitElsewhereClosesTheCopyHereAndOnlyTheSubmitterSends() throws {
        var (a, b, template, now) = try Self.sharedPair()
        for (field, value) in [("2", "4"), ("3", "4"), ("5", "pass")] {
            a.run(.setField(field: field, to: .text(value)), at: now)
        }
        b.run(.setField(field: "9", to: .text("late note")), at: now + 1_000_000)
        let done7 = a.run(.submit(followUpRequired: false), at: now + 2_000_000)
        #expect(done7)
        a.run(.handOver(mode: .share, to: nil), at: now + 3_000_000)
        let done8 = try b.receive(try a.file, at: now + 4_000_000, template: template)
        #expect(done8)
        #expect(b.state.status == .completed)
        #expect(a.state.submittedHere && !b.state.submittedHere)
        let done9 = b.run(.setField(field: "4", to: .text("1")), at: now + 5_000_000)
        #expect(!done9)
        // B's note was not before the submit: kept, shown, not in the form.
        #expect(b.state.values["9"] == nil)
        #expect(b.state.arrivedAfterSubmit.map(\.value) == [.text("late note")])
        b.run(.handOver(mode: .share, to: nil), at: now + 6_000_000)
        let done10 = try a.receive(try b.file, at: now + 7_000_000, template: template)
        #expect(done10)
        #expect(a.state.values == b.state.values && a.state.values["9"] == nil)
        #expect(a.state.score == b.state.score)
    }

    /// A discard closes only what it saw: B's answer, recorded before B
    /// heard of A's discard, keeps the copy open on both devices (the
    /// discard overtaken, with who and why); once A has seen everything, its
    /// discard closes both. Every answer stays.
    @Test(arguments: [false, true])
    func aDiscardClosesOnlyWhatItSaw(discardAfterSeeingEverything: Bool) throws {
        var (a, b, template, now) = try Self.sharedPair()
        b.run(.setField(field: "9", to: .text("kept")), at: now)
        if discardAfterSeeingEverything {
            b.run(.handOver(mode: .share, to: nil), at: now + 500_000)
            #expect(try a.receive(try b.file, at: now + 600_000, template: template))
        }
        let discarded = a.run(.discard(reason: "wrong room"), at: now + 1_000_000)
        #expect(discarded)
        #expect(a.state.status == .discarded)
        a.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        #expect(try b.receive(try a.file, at: now + 3_000_000, template: template))
        #expect(b.state.values["2"] == .rating(2) && b.state.values["9"] == .text("kept"))
        let expected: InspectionStatus = discardAfterSeeingEverything ? .discarded : .draft
        #expect(b.state.status == expected)
        #expect(b.state.overtakenDiscards.map(\.reason) == (discardAfterSeeingEverything ? [] : ["wrong room"]))
        // B sends its copy back: A, which discarded, shows the same.
        b.run(.handOver(mode: .share, to: nil), at: now + 4_000_000)
        try a.receive(try b.file, at: now + 5_000_000, template: template)
        #expect(a.state.status == expected)
        #expect(MergePropertyTests.View(a.state) == MergePropertyTests.View(b.state))
        // The open copy can still be edited and submitted, on either device.
        let edited = a.run(.setField(field: "3", to: .text("4")), at: now + 6_000_000)
        #expect(edited == !discardAfterSeeingEverything)
    }

    /// A reception asks the merge rule again only for the fields its records
    /// wrote: the receiver's other answers keep their standing write (every
    /// field's winner again after each reception made a long-shared form
    /// cost its size on every exchange).
    @Test func aReceptionDerivesOnlyTheFieldsItsRecordsWrote() throws {
        let asked = Locked<[FieldID]>([])
        let counted = FieldMerge(name: "latest, counted") { writes in
            // A field none of whose writes count is asked with none.
            asked.withLock { $0.append(writes.first?.fieldID ?? "(none)") }
            return FieldMerge.latest.winner(writes)
        }
        // B folds with the counting rule; `now` follows B's first reception.
        var (a, b, template, now) = try Self.sharedPair(merge: counted)
        let answers: [(FieldID, String)] = [
            ("3", "4"), ("4", "3"), ("5", "pass"), ("6", "fail"), ("7", "yes"), ("8", "Good"), ("9", "dry"),
        ]
        for (offset, (field, text)) in answers.enumerated() {
            let answered = b.run(.setField(field: field.rawValue, to: .text(text)), at: now + Int64(offset))
            #expect(answered)
        }
        a.run(.setField(field: "2", to: .text("5")), at: now + 1_000_000)
        a.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        asked.withLock { $0 = [] }
        let again = try b.receive(try a.file, at: now + 3_000_000, template: template)
        #expect(again)
        #expect(asked.value == ["2"], "the rule was asked for \(asked.value)")
        #expect(b.state.values["2"] == .rating(5))
        #expect(b.state.values["9"] == .text("dry"))
        #expect(b.state.values.count == answers.count + 1)
        // A submit that comes to stand changes which writes count for every
        // field: then each is derived again.
        a.run(.setField(field: "3", to: .text("1")), at: now + 4_000_000)
        a.run(.setField(field: "5", to: .text("fail")), at: now + 4_000_001)
        let submitted = a.run(.submit(followUpRequired: false), at: now + 4_000_002)
        #expect(submitted)
        a.run(.handOver(mode: .share, to: nil), at: now + 5_000_000)
        asked.withLock { $0 = [] }
        let closed = try b.receive(try a.file, at: now + 6_000_000, template: template)
        #expect(closed)
        #expect(b.state.status == .completed)
        #expect(asked.value.count == answers.count + 1, "the rule was asked \(asked.value.count) times")
        // Only A's answers happened before A's submit: B's are not part of it.
        #expect(b.state.values == a.state.values)
        #expect(b.state.values.count == 3)
    }
}

/// Ids compared by their 16 bytes without arrays (`UUID.bytesPrecede`): the
/// merge's ties and the views' key order, as `bytes` compared in order.
@Suite struct UUIDByteOrderTests {
    static let pairs: [(String, String)] = [
        ("00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"),
        ("00000000-0000-0001-0000-000000000000", "00000000-0000-0000-ffff-ffffffffffff"),
        ("01000000-0000-0000-0000-000000000000", "00ffffff-ffff-ffff-ffff-ffffffffffff"),
        ("80000000-0000-0000-0000-000000000000", "7fffffff-ffff-ffff-ffff-ffffffffffff"),
        ("ffffffff-ffff-ffff-0000-000000000001", "ffffffff-ffff-ffff-0000-000000000100"),
        ("41b1bceb-0000-4000-8000-000000000000", "41b1bceb-0000-4000-8000-000000000000"),
    ]

    @Test(arguments: pairs.indices)
    func bytesPrecedeIsTheOrderOfTheBytes(pair: Int) throws {
        let a = try #require(UUID(uuidString: Self.pairs[pair].0))
        let b = try #require(UUID(uuidString: Self.pairs[pair].1))
        #expect(a.bytesPrecede(b) == a.bytes.lexicographicallyPrecedes(b.bytes))
        #expect(b.bytesPrecede(a) == b.bytes.lexicographicallyPrecedes(a.bytes))
    }
}
