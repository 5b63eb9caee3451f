import Foundation
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import SyncWorker
import Testing

@testable import InspectionUseCases

/// What `jqc audit` anchors its check to, without `jqc` or a server: the
/// auditor's choices read as one check, and the witness's latest checkpoint
/// (its answer given by a closure) verified or refused with what went wrong.
@Suite struct AuditAnchoringTests {
    /// The check each set of choices gives, named as the report's method and anchor.
    @Test(arguments: [
        (false, false, false, false, "skipped"),
        (false, true, true, true, "skipped"),
        (true, true, false, false, "full_walk"),
        (true, true, true, true, "full_walk"),
        (true, false, true, false, "checkpoint_file"),
        (true, false, true, true, "checkpoint_file"),
        (true, false, false, true, "witness"),
        (true, false, false, false, "made_now"),
    ])
    func theChoicesGiveOneCheck(verify: Bool, full: Bool, file: Bool, witness: Bool, expected: String) {
        var asked = false
        let verification = AuditAnchoring.verification(
            verify: verify, full: full, digest: nil, checkpointFile: file ? "/tmp/cp" : nil,
            witness: witness
                ? {
                    asked = true
                    throw AuditWitnessError.nothingHeld("w", "n")
                } : nil)
        let named: String =
            switch verification {
            case .skipped: "skipped"
            case .fullWalk: "full_walk"
            case .proofs(.madeNow): "made_now"
            case .proofs(.checkpointFile(let path)): path == "/tmp/cp" ? "checkpoint_file" : "wrong file \(path)"
            case .proofs(.given(let anchor)): (try? anchor()) == nil && asked ? "witness" : "not the witness"
            }
        #expect(named == expected)
    }

    @Test func theWitnessesCheckpointIsVerifiedWithThePinnedKey() throws {
        let audited = try AuditAssemblyTests.Audited()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let name = DeviceKeyFile.name(audited.device)
        let signer = try NoteKey.generate(name: name)
        let pinned = try NoteKey(name: name, publicKey: signer.publicKey)
        let checkpoint = Checkpoint(origin: name, size: 3, root: SHA256Hasher().digest(Array("root".utf8)))
        let note = try checkpoint.signed(by: signer)
        var asked: [String] = []
        let anchor = try AuditAnchoring.witnessed(
            auditor: auditor, home: audited.directory, device: audited.device, witness: "https://w.example",
            pinned: pinned,
            latest: { name, base throws(APIError) in
                asked = [name, base]
                return CheckpointWitness.Held(note: note, size: 3, root: nil, acknowledgedAt: nil)
            })
        #expect(asked == [name, "https://w.example"])
        #expect(anchor.checkpoint == checkpoint)
        #expect(anchor.kind == .witness)
        #expect(anchor.source == "https://w.example")
        #expect(anchor.keyID == Hex.encode(pinned.keyID))
        #expect(anchor.pinned)
    }

    /// A witness's answer that gives nothing to anchor to, and the error it is.
    enum Answer: CaseIterable {
        case notWitnessing, nothingHeld, refused, signedByAnother
    }

    @Test(arguments: Answer.allCases)
    func aWitnessWithNothingToAnchorToIsNamed(answer: Answer) throws {
        let audited = try AuditAssemblyTests.Audited()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let name = DeviceKeyFile.name(audited.device)
        let pinned = try NoteKey(name: name, publicKey: try NoteKey.generate(name: name).publicKey)
        let other = try Checkpoint(origin: name, size: 1, root: .zero).signed(by: try NoteKey.generate(name: name))
        do {
            _ = try AuditAnchoring.witnessed(
                auditor: auditor, home: audited.directory, device: audited.device, witness: "https://w.example",
                pinned: pinned,
                latest: { _, _ throws(APIError) in
                    switch answer {
                    case .notWitnessing: throw .refused(status: 404, message: "not found")
                    case .nothingHeld: return nil
                    case .refused: throw .refused(status: 403, message: "forbidden")
                    case .signedByAnother: return .init(note: other, size: 1, root: nil, acknowledgedAt: nil)
                    }
                })
            Issue.record("\(answer): anchored")
        } catch {
            switch answer {
            case .notWitnessing:
                guard case AuditWitnessError.notWitnessing("https://w.example") = error else { throw error }
            case .nothingHeld:
                guard case AuditWitnessError.nothingHeld("https://w.example", name) = error else { throw error }
            case .refused:
                guard case APIError.refused(403, _) = error else { throw error }
            case .signedByAnother:
                guard case CheckpointError.notPinned(let key, _) = error else { throw error }
                #expect(key.keyID == pinned.keyID)
            }
        }
    }
}
