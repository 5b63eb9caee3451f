import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import SyncWorker
import Testing

@testable import InspectionUseCases

/// The sender's witness in a cross-device audit (`ReceivedProof.witnessed`):
/// what the configured witness holds of the sender's device, compared with
/// the checkpoint the handover was signed over.
@Suite struct SenderWitnessTests {
    enum Held: CaseIterable {
        case none, same, sameSizeOtherRoot, later, earlier, unreachable, otherKey
    }

    static let expected: [Held: String] = [
        .none: "are NOT witnessed: the witness https://w.test holds no checkpoint of that device",
        .same: "are witnessed: the witness https://w.test acknowledged the very checkpoint of ",
        .sameSizeOtherRoot: "NOT CONSISTENT: the witness https://w.test holds another tree of ",
        .later: "holds a later checkpoint of ",
        .earlier: "are NOT witnessed: the witness https://w.test holds only a checkpoint of ",
        .unreachable: "are NOT witnessed: the witness https://w.test could not be asked",
        .otherKey: "does NOT verify with the sender's key",
    ]

    @Test(arguments: Held.allCases)
    func theAuditSaysWhetherTheSendersPartIsWitnessed(_ held: Held) throws {
        let (sender, id, file) = try HandoverUseCaseTests.handedOver()
        let receiver = try HandoverUseCaseTests.Device(actor: "Ben")
        _ = try Reception(ledger: receiver.ledger, device: receiver.device).receive(
            file: file, actor: receiver.actor, clock: receiver.clock)
        let record = try #require(
            try receiver.ledger.log.records(inStream: id).first { $0.type == InspectionEventType.received.rawValue })
        guard
            case .received(let received) = try receiver.ledger.log.read({
                try CarriedClosure.event(of: record, reader: $0)
            })
        else {
            throw CocoaError(.coderReadCorrupt)
        }
        let size = try ReceivedProof.verify(received, inspection: id)
        let key = try sender.identity.signingKey(ledger: sender.ledger, at: sender.clock.now())
        let signed = try Checkpoint(verifying: received.checkpoint, key: try NoteKey(parsing: received.publicKey))
        func note(_ size: UInt64, _ root: Digest256, by signer: NoteKey = key) throws -> CheckpointWitness.Held {
            let text = try Checkpoint(origin: key.name, size: size, root: root).signed(by: signer)
            return CheckpointWitness.Held(note: text, size: size, root: root, acknowledgedAt: nil)
        }
        let other = Digest256(bytes: [UInt8](repeating: 7, count: 32))!
        let answer: () throws -> CheckpointWitness.Held? =
            switch held {
            case .none: { nil }
            case .same: { try note(signed.size, signed.root) }
            case .sameSizeOtherRoot: { try note(signed.size, other) }
            case .later: { try note(signed.size + 3, other) }
            case .earlier: { try note(signed.size - 1, other) }
            case .unreachable: { throw APIError.refused(status: 503, message: "down") }
            case .otherKey: { try note(signed.size, signed.root, by: try NoteKey.generate(name: key.name)) }
            }
        let line = ReceivedProof.witnessed(
            received, size: size, by: ReceivedProof.SenderWitness(url: "https://w.test") { _ in try answer() })
        #expect(line.hasPrefix("sender's witness: the records of device \(sender.device.lowercased)"), "\(line)")
        #expect(line.contains(try #require(Self.expected[held])), "\(line)")
    }
}
