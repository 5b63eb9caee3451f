import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

/// How an actor reads as this ledger can vouch for it, and how an unproven
/// part and the verdict read (`EventWording.actor`, `UnprovenPart`,
/// `AuditReport.verdict`).
@Suite struct ClaimWordingTests {
    static let own = UUID(uuidString: "9D366C0F-7BC3-4A8A-AB21-58E9123FA764")!
    static let other = UUID(uuidString: "AB12CD34-FD40-492D-8C04-69D685A14DBF")!
    static let supervisor = Actor(id: "user:7", name: "Supervisor", verified: true)
    static let dana = Actor(id: "local:Dana", name: "Dana", verified: false)

    struct Case: Sendable, CustomTestStringConvertible {
        var actor: Actor
        var device: UUID?
        var here: UUID?
        var marking: Bool
        var text: String
        var verifiedHere: Bool
        var testDescription: String { text }
    }

    static let cases: [Case] = [
        // This device's own records read as they always did.
        Case(actor: supervisor, device: own, here: own, marking: true, text: "Supervisor", verifiedHere: true),
        Case(actor: dana, device: own, here: own, marking: true, text: "Dana (unverified)", verifiedHere: false),
        Case(actor: dana, device: own, here: own, marking: false, text: "Dana", verifiedHere: false),
        // Unknown device or unknown ledger: nothing to tell them apart by.
        Case(actor: supervisor, device: nil, here: own, marking: true, text: "Supervisor", verifiedHere: true),
        Case(actor: supervisor, device: other, here: nil, marking: true, text: "Supervisor", verifiedHere: true),
        // Another device's actor is its claim.
        Case(
            actor: supervisor, device: other, here: own, marking: true,
            text: "Supervisor (as recorded by device jqc/ab12cd34, not verified here)", verifiedHere: false),
        Case(
            actor: supervisor, device: other, here: own, marking: false,
            text: "Supervisor (as recorded by device jqc/ab12cd34, not verified here)", verifiedHere: false),
        Case(
            actor: dana, device: other, here: own, marking: true,
            text: "Dana (unverified, as recorded by device jqc/ab12cd34)", verifiedHere: false),
        Case(
            actor: dana, device: other, here: own, marking: false,
            text: "Dana (as recorded by device jqc/ab12cd34, not verified here)", verifiedHere: false),
        // A name is shown safely, claim or not.
        Case(
            actor: Actor(id: "user:8", name: "Eve\u{202E}\n", verified: true), device: other, here: own,
            marking: true,
            text: "Eve\\u{202E}\\n (as recorded by device jqc/ab12cd34, not verified here)", verifiedHere: false),
    ]

    @Test(arguments: cases) func anActorReadsAsThisLedgerCanVouchForIt(_ c: Case) {
        #expect(
            EventWording.actor(c.actor, recordedBy: c.device, here: c.here, markingUnverified: c.marking) == c.text)
        #expect(EventWording.actorVerifiedHere(c.actor, recordedBy: c.device, here: c.here) == c.verifiedHere)
    }

    @Test(arguments: [
        (
            1, own,
            "unproven: 1 entry of device ab12cd34-fd40-492d-8c04-69d685a14dbf carried by this device's reception "
                + "at position 7: why"
        ),
        (
            3, other,
            "unproven: 3 entries of device ab12cd34-fd40-492d-8c04-69d685a14dbf met only inside device "
                + "ab12cd34-fd40-492d-8c04-69d685a14dbf's reception (through the reception at position 7 of this log): why"
        ),
    ])
    func anUnprovenPartNamesItsEntriesAndWhereTheyWereMet(count: Int, carrier: UUID, line: String) {
        let part = UnprovenPart(
            device: Self.other, carrier: carrier, receptionPosition: 7, records: (0..<count).map { _ in UUID() },
            reason: "why")
        #expect(part.line(own: Self.own) == line)
    }

    @Test func partlyProvenIsNeverIntactAndForkedOutranksIt() {
        var report = AuditSamples.report(AuditSamples.records(AuditSamples.everyEvent()))
        #expect(report.verdict == "INTACT")
        report.unproven = [
            UnprovenPart(device: Self.other, carrier: Self.other, receptionPosition: 2, records: [UUID()], reason: "r")
        ]
        #expect(report.verdict == "PARTLY PROVEN")
        #expect(report.headline == "PARTLY PROVEN: 1 carried entry of another device unproven")
        #expect(!report.isClean)
        report.forks = ["device x has two histories"]
        #expect(report.verdict == "FORKED")
    }
}
