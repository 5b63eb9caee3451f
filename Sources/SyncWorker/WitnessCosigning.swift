import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// The device's checkpoint submitted to each configured C2SP witness
/// (`WitnessList`) by the synchronous `tlog-witness` protocol, spoken exactly:
///
///     POST <url>/add-checkpoint
///     old <size the witness last cosigned>\n
///     <base64 consistency proof hash>\n ...
///     \n
///     <the device's signed checkpoint note>
///
/// and nothing else (no session token, no extension). A 200's cosignature/v1
/// lines are verified against the witness's configured key before they are
/// believed; a 409 (`text/x.tlog.size`) is re-proven once from the size it
/// names; a 409 or 422 after that, or a size larger than this log, is a fork:
/// the witness cosigned a history of this device that this ledger does not
/// extend, recorded as a `sync.checkpoint_witnessed` refusal naming both
/// checkpoints (`WitnessFork`). Each verified cosignature is recorded
/// (`checkpoint.cosigned`) and the cosigned note kept in `cosigned-checkpoint`.
public final class WitnessCosigning {
    public let list: WitnessList
    let directory: LedgerDirectory
    let signingKey: () throws -> NoteKey
    let device: UUID

    /// - Parameters:
    ///   - key: gives the device's signing key (it may publish its public half in the log first).
    public init(list: WitnessList, directory: LedgerDirectory, device: UUID, key: @escaping () throws -> NoteKey) {
        self.list = list
        self.directory = directory
        self.device = device
        self.signingKey = key
    }

    /// The largest answer read from a witness: a few cosignature lines or a size.
    static let answerLimit = 64 << 10

    /// The checkpoint signed for this round, with what a submission needs.
    struct Signed {
        var checkpoint: Checkpoint
        var note: String
    }

    /// Submits today's checkpoint to every witness (unless every one already
    /// cosigned all but the log's records of their cosignatures), records
    /// what they cosigned, and says what each did. Throws only when the
    /// ledger cannot be read or written. `always` submits even then (a
    /// restored backup's check asks what each witness holds now).
    public func run(
        ledger: InspectionLedger, transport: any HTTPTransport, clock: any LedgerClock, always: Bool = false
    ) throws -> WitnessRound {
        let held = try Self.recorded(in: ledger.log, device: device)
        let keys = try list.witnesses.map { entry in (entry, try entry.cosignerKey()) }
        let last = keys.map { _, key in held.last { $0.witness == key.name && $0.keyID == Hex.encode(key.keyID) } }
        if !always, let size = try upToDate(ledger: ledger, last: last) {
            return WitnessRound(
                results: keys.map { .upToDate(name: $0.1.name, url: $0.0.url, size: size) },
                quorum: list.effectiveQuorum)
        }
        let signed = try sign(ledger: ledger, anchor: held.max { $0.size < $1.size })
        let submission = Submission(signed: signed, ledger: ledger, transport: transport, recorded: held)
        var results: [WitnessResult] = []
        for (index, (entry, key)) in keys.enumerated() {
            let witness = WitnessTarget(url: entry.url, key: key)
            results.append(try submit(submission, to: witness, old: last[index]?.size ?? 0))
        }
        try keep(results, signed: signed, ledger: ledger, clock: clock)
        try recordForks(results, ledger: ledger, clock: clock)
        return WitnessRound(results: results, quorum: list.effectiveQuorum, checkpoint: signed.checkpoint)
    }

    /// The size every witness cosigned when only the records of those
    /// cosignatures came after it (and the log still has that root there):
    /// nothing new to witness. Nil when a submission is needed.
    private func upToDate(ledger: InspectionLedger, last: [DeviceStreamEvent.CheckpointCosigned?]) throws -> UInt64? {
        guard !last.isEmpty, let first = last[0], last.allSatisfy({ $0?.size == first.size && $0?.root == first.root })
        else { return nil }
        let device = self.device
        return try ledger.log.read { reader -> UInt64? in
            let size = try reader.treeSize()
            guard first.size > 0, first.size <= size,
                Data(try reader.treeRoot(size: first.size).bytes).base64EncodedString() == first.root
            else { return nil }
            var position = first.size + 1
            while position <= size {
                guard let record = try reader.record(at: position), record.stream == device,
                    record.type == DeviceStreamEventType.checkpointCosigned.rawValue
                else { return nil }
                position += 1
            }
            return first.size
        }
    }

    /// Today's checkpoint, its root checked against the records first (from
    /// the largest checkpoint cosigned, else from every leaf): a damaged
    /// tree is refused here, never signed or sent.
    private func sign(ledger: InspectionLedger, anchor: DeviceStreamEvent.CheckpointCosigned?) throws -> Signed {
        let key = try signingKey()
        let checked = try ledger.log.read { reader -> (size: UInt64, root: Digest256, heads: Digest256?) in
            let start = anchor.flatMap { held in
                Data(base64Encoded: held.root).flatMap { Digest256(bytes: Array($0)) }.map { (held.size, $0) }
            }
            // The map's root of the same snapshot (complete's extension line).
            let heads = try reader.headMapRoot()
            do {
                let tree = try reader.checkedTreeRoot(from: start)
                return (tree.size, tree.root, heads)
            } catch is TreeCheckError where start != nil {
                // A rewritten log has another root at the anchor: checked from
                // every leaf, and sent, for the witness to refuse.
                let tree = try reader.checkedTreeRoot(from: nil)
                return (tree.size, tree.root, heads)
            }
        }
        let checkpoint = Checkpoint(
            origin: key.name, size: checked.size, root: checked.root, heads: checked.heads)
        return Signed(checkpoint: checkpoint, note: try checkpoint.signed(by: key))
    }

    /// What every submission of a round shares.
    struct Submission {
        var signed: Signed
        var ledger: InspectionLedger
        var transport: any HTTPTransport
        /// The cosignatures this log recorded (a fork names the witness's root from them when it can).
        var recorded: [DeviceStreamEvent.CheckpointCosigned]
    }

    /// One witness: the submission from `old`, and once more from the size
    /// a 409 names.
    private func submit(_ round: Submission, to witness: WitnessTarget, old: UInt64) throws -> WitnessResult {
        let (signed, ledger, transport) = (round.signed, round.ledger, round.transport)
        func forked(_ held: UInt64) throws -> WitnessResult {
            .forked(
                try WitnessFork.found(witness, held: held, signed: signed, ledger: ledger, recorded: round.recorded))
        }
        let size = signed.checkpoint.size
        var from = min(old, size)
        for attempt in 0..<2 {
            let proof = try ledger.log.read { reader in
                from > 0 && from < size ? try reader.consistencyProof(from: from, to: size) : []
            }
            let answer: HTTPResponse
            do {
                answer = try transport.send(witness.request(old: from, proof: proof, note: signed.note))
            } catch {
                return .unreachable(witness, why: error.description)
            }
            switch answer.status {
            case 200: return witness.verify(answer, signed: signed)
            case 409:
                guard let held = WitnessTarget.heldSize(answer) else {
                    return .refused(witness, status: 409, why: "its 409 does not name a size (text/x.tlog.size)")
                }
                // A witness ahead of this log, or a second conflict after
                // re-proving from the size it named: another history.
                if held > size || attempt == 1 || held == from { return try forked(held) }
                from = held
            case 422: return try forked(from)
            case 404:
                return .unknownLog(witness, origin: signed.checkpoint.origin, logKey: try signingKey().verifierKey)
            default: return .refused(witness, status: answer.status, why: WitnessTarget.text(answer))
            }
        }
        return .refused(witness, status: 409, why: "it named another size twice")
    }

    /// Records each verified cosignature (decided on the device's stream,
    /// `DeviceState`) and keeps the cosigned note.
    private func keep(_ results: [WitnessResult], signed: Signed, ledger: InspectionLedger, clock: any LedgerClock)
        throws
    {
        let cosigned = results.compactMap(\.cosignature)
        guard !cosigned.isEmpty else { return }
        let root = Data(signed.checkpoint.root.bytes).base64EncodedString()
        let actor = Actor(id: "device:\(device.lowercased)", name: "sync-worker", verified: true)
        try ledger.record(
            cosigned.map { cosignature in
                DeviceCommand.recordCosignature(
                    .init(
                        witness: cosignature.name, keyID: Hex.encode(cosignature.keyID),
                        timestamp: cosignature.timestamp, size: signed.checkpoint.size, root: root))
            }, onStreamOf: device, by: actor, clock: clock)
        let note = signed.note + cosigned.map(\.line).joined()
        try FileStore.writeAtomically(Data(note.utf8), to: directory.cosignedCheckpointPath, mode: 0o644)
    }

    /// Every `checkpoint.cosigned` of the device's stream, oldest first.
    public static func recorded(in log: EventLog, device: UUID) throws -> [DeviceStreamEvent.CheckpointCosigned] {
        try log.read { reader in
            try reader.records(inStream: device).compactMap { record in
                guard record.type == DeviceStreamEventType.checkpointCosigned.rawValue,
                    case .checkpointCosigned(let event)? = try DeviceStreamEvent.decode(
                        type: record.type, schemaVersion: Int(record.schemaVersion), payload: record.payload)
                else { return nil }
                return event
            }
        }
    }
}

/// One configured witness as a submission target.
public struct WitnessTarget: Sendable, Equatable {
    public var url: String
    public var key: CosignerKey

    /// The add-checkpoint request: the body only, no credentials.
    func request(old: UInt64, proof: [Digest256], note: String) -> HTTPRequest {
        var body = "old \(old)\n"
        for hash in proof { body += Data(hash.bytes).base64EncodedString() + "\n" }
        body += "\n" + note
        return HTTPRequest(
            method: .post, url: url + "/add-checkpoint", headers: ["Accept": "text/plain, text/x.tlog.size"],
            body: .bytes(Array(body.utf8), contentType: "text/plain; charset=utf-8"),
            maximumResponseBytes: WitnessCosigning.answerLimit)
    }

    /// A 200's cosignatures by this witness's key, verified over the checkpoint sent.
    func verify(_ answer: HTTPResponse, signed: WitnessCosigning.Signed) -> WitnessResult {
        guard let text = String(bytes: answer.body, encoding: .utf8) else {
            return .badCosignature(self, why: "its answer is not UTF-8")
        }
        do {
            let found = try Cosignature.verified(lines: text, body: signed.checkpoint.text, key: key)
            guard let newest = found.max(by: { $0.timestamp < $1.timestamp }) else {
                return .badCosignature(
                    self,
                    why: "its answer holds no cosignature by its configured key \(key.name)+\(Hex.encode(key.keyID))")
            }
            return .cosigned(self, newest)
        } catch {
            return .badCosignature(self, why: error.description)
        }
    }

    /// The size a 409's `text/x.tlog.size` body names.
    static func heldSize(_ answer: HTTPResponse) -> UInt64? {
        guard let type = answer.headers["Content-Type"], type.lowercased().hasPrefix("text/x.tlog.size"),
            let text = String(bytes: answer.body, encoding: .utf8), text.hasSuffix("\n")
        else { return nil }
        let digits = text.dropLast()
        guard let size = UInt64(digits), String(size) == digits else { return nil }
        return size
    }

    /// A refusal's body, shortened and made safe for a terminal.
    static func text(_ answer: HTTPResponse) -> String {
        let body = String(decoding: answer.body.prefix(300), as: UTF8.self)
        let line = TerminalText.singleLine(Redaction.text(body.trimming(.spacesAndNewlines)))
        return "HTTP \(answer.status)" + (line.isEmpty ? "" : ": \(line)")
    }
}
