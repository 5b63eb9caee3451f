import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// Issue #30's property: three devices pass `--share` files among them in a
/// seeded order (answers, clears, field photos, issues with photos, stale
/// and all-seeing discards, submits, a device wiped and given the work back,
/// one clock an hour behind). Once everyone holds everyone's latest, every
/// device shows what an independent model of the merge rules
/// (`TeamExchangeModel`) says, the same on each, and no event, photo or
/// issue is lost or doubled. The model is not the fold: a model with a rule
/// broken on purpose is reported as differing.
@Suite struct TeamExchangePropertyTests {
    typealias Device = HandoverUseCaseTests.Device

    /// One member of the team: its ledger and how far its clock is off.
    struct Member {
        var device: Device
        let skew: Int64
        /// The stream version of this device's own records read so far.
        var seen: UInt64 = 0
    }

    /// A share file on its way: who wrote it, to whom, and what it holds.
    struct Parcel {
        var path: String
        var to: Int
        var holds: Set<UUID>
    }

    /// One run of the exchanges: the findings (empty when the code and the
    /// model agree) and what the run reached.
    struct Outcome {
        var findings: [String] = []
        var status: InspectionStatus = .notStarted
        var overtaken = 0
        var conflicts = 0
        var adopted = false
        /// What the checker said of each broken model judging the same history.
        var brokenFindings: [TeamExchangeModel.Rule: [String]] = [:]
    }

    static let hour: Int64 = 3_600_000_000

    /// The team, the model and the inspection while a run goes on.
    struct Run {
        var members: [Member]
        var model: TeamExchangeModel
        let id: UUID
        var now: Int64 = 0
        var serial = 0
        var findings: [String] = []
        var inbox: [Parcel] = []
        /// Wiped devices: kept only so the files they wrote stay where they were put.
        var gone: [Device] = []

        /// What the probes found against each model with a rule broken on purpose.
        var brokenFindings: [TeamExchangeModel.Rule: [String]] = [:]

        mutating func note(_ finding: String) { if findings.count < 8 { findings.append(finding) } }

        /// Compares what member `index` shows now with the model, and with
        /// each model with a rule broken on purpose judging the same
        /// history. A broken rule often shows only for a while (a stale
        /// discard later overtaken for good, an answer later overwritten),
        /// so the check once everyone settled would miss it.
        mutating func probe(_ index: Int, after step: String) throws {
            let device = members[index].device
            guard let state = try device.ledger.state(of: id) else { return }
            for rule in [model.rule] + TeamExchangeModel.Rule.broken.filter({ $0 != model.rule }) {
                let judged = rule == model.rule ? model : model.judging(by: rule)
                guard let difference = Self.difference(state, judged, device.device) else { continue }
                let finding = "\(device.actor.name) after \(step): \(difference)"
                if rule == model.rule {
                    note(finding)
                } else if brokenFindings[rule, default: []].count < 8 {
                    brokenFindings[rule, default: []].append(finding)
                }
            }
        }

        /// How `state` differs from what `model` says `device` shows, or nil.
        static func difference(_ state: InspectionState, _ model: TeamExchangeModel, _ device: UUID) -> String? {
            if state.status != model.status(of: device) {
                return "shows \(state.status), the \(model.rule) model says \(model.status(of: device))"
            }
            if state.values != model.values(of: device) {
                return "shows \(state.values), the \(model.rule) model says \(model.values(of: device))"
            }
            if state.overtakenDiscards.count != model.overtakenDiscards(of: device) {
                return "shows \(state.overtakenDiscards.count) overtaken discards, the \(model.rule) model says "
                    + "\(model.overtakenDiscards(of: device))"
            }
            return nil
        }

        /// Sets the member's clock to the run's time, off by its skew.
        func tick(_ index: Int) {
            let member = members[index]
            let target = ManualClock().now().microsecondsSinceEpoch + 2 * hour + now + member.skew
            let gap = target - member.device.clock.now().microsecondsSinceEpoch
            if gap > 0 { member.device.clock.advance(microseconds: gap) }
        }

        /// Tells the model of the member's records recorded since it last
        /// looked; `arrived` is what a reception among them carried.
        mutating func observe(_ index: Int, arrived: Set<UUID> = []) throws {
            let device = members[index].device
            let records = try device.ledger.log.read { try $0.records(inStream: id) }
            let template = try device.ledger.state(of: id)?.template
            for record in records where record.streamVersion > members[index].seen {
                let event = try EventUpcaster.decode(record, template: template)
                if case .received = event { model.learn(device.device, arrived) }
                model.record(
                    record.id, on: device.device, at: record.recordedAt.microsecondsSinceEpoch,
                    kind: TeamExchangeModel.Kind(event))
                members[index].seen = record.streamVersion
            }
        }
    }

    static let answers: [(field: String, values: [FieldValue])] = [
        ("2", (1...5).map { .rating($0) }), ("3", (1...5).map { .rating($0) }), ("4", (1...5).map { .rating($0) }),
        ("5", [.passFail(.pass), .passFail(.fail)]), ("6", [.passFail(.pass), .passFail(.fail)]),
        ("9", [.text("clean"), .text("wet floor"), .text("needs paint")]),
    ]

    /// A photo kept in the member's store: a PNG no other capture of the run has.
    static func photo(on device: Device, serial: Int) throws -> PhotoReference {
        let data = SampleReference.png(width: 2 + serial / 250, red: UInt8(serial % 250))
        let prepared = try device.ledger.photos.prepare(data: data, name: "p\(serial).png")
        _ = try device.ledger.photos.keep(prepared)
        return PhotoReference(
            photoID: UUID(), sha256: try #require(Digest256(hex: prepared.description.sha256)),
            size: prepared.description.size, mediaType: prepared.description.mediaType)
    }

    /// One piece of work on member `index`, picked by `random`: refused when
    /// the model says the copy is closed there, recorded when it is open.
    static func work(_ run: inout Run, _ index: Int, random: inout SeededRandom, exchange: Int) throws {
        let device = run.members[index].device
        // A device that holds no copy yet has nothing to work on.
        guard run.model.status(of: device.device) != .notStarted else { return }
        let open = run.model.status(of: device.device) == .draft
        run.serial += 1
        let roll = Int.random(in: 0..<100, using: &random)
        let command: InspectionCommand
        switch roll {
        case 0..<50:
            let (field, values) = answers[Int.random(in: 0..<answers.count, using: &random)]
            command = .setField(field: field, to: .value(values.randomElement(using: &random)!))
        case 50..<60: command = .clearField(field: ["4", "6", "9"].randomElement(using: &random)!)
        case 60..<72: command = .capturePhoto(try photo(on: device, serial: run.serial), for: .field("10"))
        case 72..<84:
            command = .flagIssue(
                FlagIssue(
                    issueID: UUID(), severity: "medium", description: "issue \(run.serial)",
                    photo: try photo(on: device, serial: run.serial)))
        case 84..<92: command = .discard(reason: "wrong room \(run.serial)")
        default:
            command = exchange >= 12 ? .submit(followUpRequired: false) : .setField(field: "4", to: .value(.rating(3)))
        }
        run.tick(index)
        do {
            try device.record([command], on: run.id)
            if !open { run.note("\(device.actor.name) recorded \(command) on a copy the model says is closed") }
        } catch {
            if open {
                run.note("\(device.actor.name) was refused \(command) on a copy the model says is open: \(error)")
            }
        }
        try run.observe(index)
        try run.probe(index, after: "exchange \(exchange)'s work")
    }

    /// Member `from` writes a share file for member `to` (into the inbox).
    static func share(_ run: inout Run, from: Int, to: Int) throws {
        let device = run.members[from].device
        // A device that holds no copy yet has none to share.
        guard !run.model.holds(device.device).isEmpty else { return }
        run.tick(from)
        run.serial += 1
        let path = device.temporary.appending("share-\(run.serial).json")
        _ = try Handover(ledger: device.ledger, identity: device.identity).write(
            inspection: run.id, to: nil, mode: .share, output: path, actor: device.actor, clock: device.clock)
        try run.observe(from)
        run.inbox.append(Parcel(path: path, to: to, holds: run.model.holds(device.device)))
    }

    /// Delivers a parcel: the reception records iff it brings something new.
    static func deliver(_ run: inout Run, _ parcel: Parcel) throws {
        let device = run.members[parcel.to].device
        run.tick(parcel.to)
        let expected = !parcel.holds.isSubset(of: run.model.holds(device.device))
        let received = try Reception(ledger: device.ledger, device: device.device).receive(
            file: parcel.path, actor: device.actor, clock: device.clock)
        if received.recorded != expected {
            run.note("\(device.actor.name) recorded \(received.recorded) a file the model says brings new: \(expected)")
        }
        try run.observe(parcel.to, arrived: parcel.holds)
        try run.probe(parcel.to, after: "receiving \(parcel.path.split(separator: "/").last ?? "")")
    }

    /// Everyone shares with everyone until the model says all hold the same.
    static func settle(_ run: inout Run) throws {
        for parcel in run.inbox where parcel.to < run.members.count { try deliver(&run, parcel) }
        run.inbox = []
        for _ in 0..<3 {
            let held = run.members.map { run.model.holds($0.device.device) }
            if Set(held).count == 1 { return }
            for from in run.members.indices {
                for to in run.members.indices where to != from {
                    try share(&run, from: from, to: to)
                    if let parcel = run.inbox.popLast() { try deliver(&run, parcel) }
                }
            }
        }
    }

    /// One seeded run of `exchanges` share files with the model's `rule`.
    static func run(seed: UInt64, exchanges: Int = 30, rule: TeamExchangeModel.Rule = .real) throws -> Outcome {
        var random = SeededRandom(seed: seed)
        // Cleo's clock is an hour behind.
        let names = ["Ana", "Ben", "Cleo"]
        var run = Run(
            members: try names.enumerated().map { Member(device: try Device(actor: $1), skew: $0 == 2 ? -hour : 0) },
            model: TeamExchangeModel(rule: rule), id: UUID())
        run.tick(0)
        let id = try run.members[0].device.startInspection()
        run = Run(members: run.members, model: run.model, id: id)
        // The required fields answered, so a submit is never refused for them.
        try run.members[0].device.record(
            [
                .setField(field: "2", to: .value(.rating(3))), .setField(field: "3", to: .value(.rating(4))),
                .setField(field: "5", to: .value(.passFail(.pass))),
            ], on: id)
        try run.observe(0)
        for exchange in 1...exchanges {
            run.now += Int64.random(in: 1...90, using: &random) * 1_000_000
            if exchange == exchanges / 2 + 3 {
                // Ben is wiped (a new ledger, a new device id) and Ana gives the work back.
                let wiped = run.members[1].device.device
                run.gone.append(run.members[1].device)
                run.members[1] = Member(device: try Device(actor: "Ben"), skew: 0)
                run.inbox.removeAll { $0.to == 1 }
                run.model.wipe(wiped)
                try share(&run, from: 0, to: 1)
                try deliver(&run, run.inbox.removeLast())
                continue
            }
            let from = Int.random(in: 0..<3, using: &random)
            let to = (from + Int.random(in: 1...2, using: &random)) % 3
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                try work(&run, from, random: &random, exchange: exchange)
            }
            try share(&run, from: from, to: to)
            // Files arrive late and out of order: a discard may see little.
            if !run.inbox.isEmpty, Int.random(in: 0..<10, using: &random) < 7 {
                try deliver(&run, run.inbox.remove(at: Int.random(in: 0..<run.inbox.count, using: &random)))
            }
        }
        try settle(&run)
        var outcome = Outcome()
        // The sender wiped before it synced: another device adopts the sending.
        if let sender = run.model.sender(), !run.members.contains(where: { $0.device.device == sender }) {
            let adopter = run.members[0].device
            run.tick(0)
            _ = try SyncAdoption.adopt(
                id, in: adopter.ledger, actor: adopter.actor, device: adopter.device, clock: adopter.clock)
            try run.observe(0)
            try settle(&run)
            outcome.adopted = true
        }
        try check(&run)
        outcome.findings = run.findings
        // The same history judged by each model with a rule broken on purpose.
        for broken in TeamExchangeModel.Rule.broken where broken != rule {
            var judged = run
            judged.findings = []
            judged.model = run.model.judging(by: broken)
            try check(&judged)
            outcome.brokenFindings[broken] = judged.findings + run.brokenFindings[broken, default: []]
        }
        outcome.status = run.model.status(of: run.members[0].device.device)
        outcome.overtaken = run.model.overtakenDiscards(of: run.members[0].device.device)
        outcome.conflicts = run.model.conflicts(of: run.members[0].device.device).count
        return outcome
    }
}

extension TeamExchangePropertyTests {
    /// What every device must show alike.
    struct Shown: Equatable {
        var status: InspectionStatus
        var values: [FieldID: FieldValue]
        var conflicts: [FieldID]
        var photos: Set<UUID>
        var issues: Set<UUID>
        var overtaken: Int
        var submitDevice: UUID?
        var summary: [String]
    }

    /// Compares every member's views with the model and with each other.
    static func check(_ run: inout Run) throws {
        var shown: [Shown] = []
        for member in run.members {
            let device = member.device
            let name = device.actor.name
            let state = try #require(try device.ledger.state(of: run.id))
            let model = run.model
            let own = try device.ledger.log.read { try $0.records(inStream: run.id) }.map(\.id)
            let folded = Set(own).union(state.carriedEventIDs)
            if folded != model.holds(device.device) || own.count + state.carriedEventIDs.count != folded.count {
                run.note(
                    "\(name) folded \(folded.count) events (\(own.count) own), the model says it holds "
                        + "\(model.holds(device.device).count): lost \(model.holds(device.device).subtracting(folded).count)"
                )
            }
            if state.status != model.status(of: device.device) {
                run.note("\(name) shows \(state.status), the model says \(model.status(of: device.device))")
            }
            if state.values != model.values(of: device.device) {
                run.note("\(name) shows \(state.values), the model says \(model.values(of: device.device))")
            }
            let conflicts = state.conflicts.map(\.fieldID)
            if Set(conflicts) != model.conflicts(of: device.device) {
                run.note("\(name) shows conflicts \(conflicts), the model says \(model.conflicts(of: device.device))")
            }
            let photos = state.photos.map(\.photo.photoID)
            let issues = state.issues.map(\.id)
            if Set(photos) != model.photos(of: device.device) || Set(photos).count != photos.count {
                run.note(
                    "\(name) shows \(photos.count) photos, the model says \(model.photos(of: device.device).count)")
            }
            if Set(issues) != model.issues(of: device.device) || Set(issues).count != issues.count {
                run.note(
                    "\(name) shows \(issues.count) issues, the model says \(model.issues(of: device.device).count)")
            }
            if state.overtakenDiscards.count != model.overtakenDiscards(of: device.device) {
                run.note(
                    "\(name) shows \(state.overtakenDiscards.count) overtaken discards, the model says "
                        + "\(model.overtakenDiscards(of: device.device))")
            }
            for photo in state.photos where !device.ledger.photos.holds(sha256: photo.photo.sha256.hex) {
                run.note("\(name) shows photo \(photo.photo.photoID) but its store lacks the file")
            }
            // A discarded copy's issues leave the issues view (`InspectionViews`).
            let rows = try device.ledger.issues().filter { $0.inspectionID == run.id }
            let listed = state.status == .discarded ? [] : issues
            if Set(rows.map(\.id)) != Set(listed) || rows.count != listed.count {
                run.note("\(name)'s issues view lists \(rows.count) issues, the rules say \(listed.count)")
            }
            let summary = try #require(try device.ledger.summary(of: run.id))
            try checkOutbox(&run, member, state: state)
            shown.append(
                Shown(
                    status: state.status, values: state.values, conflicts: conflicts, photos: Set(photos),
                    issues: Set(issues), overtaken: state.overtakenDiscards.count,
                    submitDevice: state.standingSubmit?.stamp.device,
                    summary: [
                        "\(summary.status)", "\(summary.answered)", "\(summary.photoCount)", "\(summary.issueCount)",
                        "\(summary.score.map { "\($0)" } ?? "-")",
                    ]))
        }
        for (index, other) in shown.enumerated().dropFirst() where other != shown[0] {
            run.note("\(run.members[index].device.actor.name) shows \(other), Ana shows \(shown[0])")
        }
    }

    /// The outbox as the rules say: only the sender holds the inspection,
    /// its photos and issues; every other device expects it from the sender.
    static func checkOutbox(_ run: inout Run, _ member: Member, state: InspectionState) throws {
        let device = member.device
        let items = try device.ledger.outbox().filter { $0.inspectionID == run.id }
        let expected = try device.ledger.unreportedSubmissions().filter { $0.inspectionID == run.id }
        let name = device.actor.name
        guard let sender = run.model.sender() else {
            if !items.isEmpty || !expected.isEmpty {
                run.note(
                    "\(name)'s outbox holds \(items.count) items, expects \(expected.count) of an unsubmitted copy")
            }
            return
        }
        if sender == device.device {
            let kinds = Set(items.map(\.item))
            let want = Set(
                [SyncItem(kind: .inspection, id: run.id)]
                    + state.photos.map { SyncItem(kind: .photo, id: $0.photo.photoID) }
                    + state.issues.map { SyncItem(kind: .issue, id: $0.id) })
            if kinds != want || !expected.isEmpty {
                run.note(
                    "\(name) sends \(items.count) items, the rules say \(want.count); it expects \(expected.count)")
            }
        } else if !items.isEmpty || expected.map(\.expectedSender) != [sender] {
            run.note(
                "\(name)'s outbox holds \(items.count) items and expects \(expected.map(\.expectedSender)), "
                    + "the rules say none and \(sender)")
        }
    }

    static let seeds: [UInt64] = [1, 42]

    @Test(arguments: seeds)
    func threeDevicesThatExchangedEverythingShowWhatTheRulesSay(seed: UInt64) throws {
        let outcome = try Self.run(seed: seed)
        #expect(outcome.findings.isEmpty, "seed \(seed): \(outcome.findings.joined(separator: "\n"))")
    }

    /// The checker is not the fold: each model with a rule broken on purpose
    /// (any discard closes, the wall clock orders answers, a discard never
    /// closes), judging the same histories, disagrees with the code, and the
    /// checker says where. The probes after every step see what the end
    /// hides: a stale discard before later work overtakes it for good, an
    /// answer of the hour-behind clock before another overwrites it.
    /// (Seed 10's 20 exchanges reach all three; seeds 3 and 11, used
    /// before, reach only the discard that never closes.)
    @Test func everyDeliberatelyBrokenRuleIsCaught() throws {
        let outcomes = try [UInt64(10)].map { try Self.run(seed: $0, exchanges: 20) }
        #expect(outcomes.allSatisfy { $0.findings.isEmpty }, "\(outcomes.flatMap(\.findings))")
        for rule in TeamExchangeModel.Rule.broken {
            #expect(
                outcomes.contains { !($0.brokenFindings[rule] ?? []).isEmpty },
                "the checker found nothing wrong with the model where \(rule)")
        }
    }
}
