import Foundation
import InspectionDomain
import LedgerCore
import Testing

@testable import InspectionUseCases
@testable import SyncWorker

/// How a pass ends `jqc sync`, whether `jqc sync` made it or the background
/// sync made it for it (`SyncService.Pass.failure`, `witnessLines`, issue
/// #33 item 2: "exit status as if it ran itself"): the witness's alarm
/// first, then a refused session or unusable server, then an item failed
/// for good; a round of witnesses said one line per witness and the quorum.
@Suite struct SyncPassAnswerTests {
    static func pass(stop: SyncReport.Stop? = nil, failedForGood: Bool = false, witness: CheckpointWitness.Outcome?)
        -> SyncService.Pass
    {
        var report = SyncReport()
        report.stop = stop
        if failedForGood {
            report.gaveUp = [
                SyncReport.Failure(
                    item: SyncItem(kind: .inspection, id: UUID()), inspectionID: UUID(), error: "HTTP 422: no",
                    httpStatus: 422)
            ]
        }
        return SyncService.Pass(report: report, seconds: 0.5, witness: witness)
    }

    /// A round of one C2SP witness whose answer was `result`.
    static func round(_ result: (WitnessTarget) -> WitnessResult) throws -> CheckpointWitness.Outcome {
        // A key of the right length: nothing is verified here.
        let key = try CosignerKey(name: "w.test", publicKey: [UInt8](repeating: 7, count: 32))
        return .cosigning(WitnessRound(results: [result(WitnessTarget(url: "https://w.test", key: key))], quorum: 1))
    }

    /// How `jqc sync` ends.
    enum Ending: Sendable {
        case succeeds
        case fails(String)
        /// Exit status 1 with the witness's own words.
        case failsWithTheWitness
    }

    struct Case: CustomStringConvertible, Sendable {
        var description: String
        var pass: @Sendable () throws -> SyncService.Pass
        var ending: Ending
        var witnessLines: Int
    }

    static let cases: [Case] = [
        Case(description: "nothing wrong", pass: { pass(witness: nil) }, ending: .succeeds, witnessLines: 0),
        Case(
            description: "failed for good", pass: { pass(failedForGood: true, witness: nil) },
            ending: .fails(SyncService.Pass.failedForGoodAdvice), witnessLines: 0),
        Case(
            description: "a refused session", pass: { pass(stop: .loginRequired("log in again"), witness: nil) },
            ending: .fails("log in again"), witnessLines: 0),
        Case(
            description: "a server witness's refusal, before the rest",
            pass: { pass(stop: .loginRequired("log in again"), failedForGood: true, witness: .refused("409")) },
            ending: .failsWithTheWitness, witnessLines: 0),
        Case(
            description: "a server witness not reached", pass: { pass(witness: .failed("HTTP 503")) },
            ending: .succeeds, witnessLines: 1),
        Case(
            description: "a round with a bad cosignature",
            pass: { pass(witness: try round { .badCosignature($0, why: "signed by another key") }) },
            ending: .failsWithTheWitness, witnessLines: 2),
        Case(
            description: "a round whose witness was not reached",
            pass: { pass(witness: try round { .unreachable($0, why: "down") }) }, ending: .succeeds,
            witnessLines: 2),
    ]

    @Test(arguments: cases)
    func aPassEndsAsJQCSyncWouldAndSaysItsWitnessAsItWould(_ test: Case) throws {
        let pass = try test.pass()
        let expected: String? =
            switch test.ending {
            case .succeeds: nil
            case .fails(let message): message
            case .failsWithTheWitness: TerminalText.singleLine(try #require(pass.witness).description)
            }
        #expect(pass.failure == expected)
        #expect(pass.witnessLines.count == test.witnessLines, "\(pass.witnessLines)")
        #expect(pass.witnessLines.allSatisfy { $0.hasPrefix("  ") && !$0.contains("\n") }, "\(pass.witnessLines)")
        let summary = SyncSummary(
            pass.report, seconds: pass.seconds, watching: false, now: Timestamp(microsecondsSinceEpoch: 0),
            unreachable: { $0 })
        let answer = SyncService.Answer(pass, summary: summary, document: .object(["sent": .integer(0)]))
        #expect(answer.lines == summary.lines + pass.witnessLines)
        #expect(answer.warnings == summary.warnings)
        #expect(answer.failure == expected)
        #expect(answer.document == .object(["sent": .integer(0)]))
    }
}
