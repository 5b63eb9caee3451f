import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// The server as a witness of the device's log (`Schemas/ledger-format.md`,
/// "The witness protocol"): once per sync run, after the outbox, the worker
/// asks the server for the last checkpoint it acknowledged for this device
/// (`GET /ledger/checkpoints/latest`), signs a checkpoint of today's tree and
/// sends it with the consistency proof from that one
/// (`POST /ledger/checkpoints`). The server checks both and keeps it, or
/// refuses with 409 one that does not extend what it holds: the log was
/// rewritten after it synced. The outcome is recorded in the device's stream
/// as a `sync.checkpoint_witnessed` event, so the log says whether, and up
/// to which checkpoint, its history was witnessed.
public final class CheckpointWitness {
    /// The event recording each outcome, in the device's own stream.
    public static let eventType = DeviceStreamEventType.checkpointWitnessed.rawValue

    /// What the witness step of a run came to.
    public enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// The server acknowledged the checkpoint of `size` records (it held `previous` before).
        case acknowledged(size: UInt64, previous: UInt64?)
        /// The server holds the checkpoint of every record but the log's own
        /// record of that acknowledgement: nothing new to witness, nothing recorded
        /// (so `--watch` does not add a record every interval).
        case upToDate(size: UInt64)
        /// The server has no witness endpoint (404): the history is not witnessed.
        case unsupported(String)
        /// The server refused it (409): it does not extend what the server holds.
        case refused(String)
        /// The exchange failed (the server unreachable, a 5xx): tried again next sync.
        case failed(String)
        /// The server answered 200, but not with the checkpoint that was sent
        /// (another size, root or note): the witness failed, nothing was acknowledged.
        case wrongAnswer(String)
        /// The round of the configured C2SP witnesses (`WitnessCosigning`).
        case cosigning(WitnessRound)

        /// A refusal, a wrong answer, a fork or a bad cosignature: the sync exits with status 1.
        public var isAlarm: Bool {
            switch self {
            case .refused, .wrongAnswer: true
            case .cosigning(let round): round.isAlarm
            default: false
            }
        }

        /// The lines `jqc sync` prints (one, but one per witness and the quorum for a round).
        public var lines: [String] {
            if case .cosigning(let round) = self { return round.lines }
            return [description]
        }

        public var description: String {
            switch self {
            case .cosigning(let round): round.lines.joined(separator: "; ")
            case .acknowledged(let size, let previous):
                "witness: the server acknowledged the checkpoint of \(size) records"
                    + (previous.map { " (consistent with the one of \($0) records it held)" } ?? " (its first)")
            case .upToDate(let size):
                "witness: the server holds the checkpoint of \(size) records; nothing was recorded since but its "
                    + "acknowledgement"
            case .unsupported(let why): "witness: the history was NOT witnessed: \(why)"
            case .refused(let why):
                "WITNESS REFUSED: the server holds an earlier checkpoint of this device's log that today's log does "
                    + "not extend: \(why). The log was changed after it synced; keep this ledger as it is and "
                    + "report it."
            case .failed(let why): "witness: the checkpoint could not be sent (\(why)); it is sent next sync"
            case .wrongAnswer(let why):
                "WITNESS FAILED: \(why). The history was NOT witnessed; report it to the server's operator."
            }
        }
    }

    /// The device's signing key, asked for only when a checkpoint is sent (it
    /// may publish the key in the log first: a run that stops early records nothing).
    let signingKey: () throws -> NoteKey
    let device: UUID
    /// The outcome of the last `run`, for the command's summary.
    public private(set) var outcome: Outcome?

    /// The witness's base URL (`witness_url` of the ledger's config); nil is the sync server's own.
    let baseURL: String?

    /// The configured C2SP witnesses (`witnesses.json`): when there are any,
    /// the round goes to them and the legacy `witness_url` protocol is not spoken.
    public var cosigning: WitnessCosigning?

    /// - Parameters:
    ///   - key: gives the device's signing key, its public half published in the log.
    ///   - device: the device id, the stream the outcomes are recorded in.
    ///   - baseURL: where the witness is (`WitnessSetting`); nil asks the sync server.
    ///     The session's token goes only to the sync server's own URL, never elsewhere.
    public init(key: @escaping () throws -> NoteKey, device: UUID, baseURL: String? = nil) {
        self.signingKey = key
        self.device = device
        self.baseURL = baseURL
    }

    /// One call to the witness: through the session (refreshed on a 401)
    /// when it is the sync server, else without credentials.
    private func call(_ session: ServerSession, _ method: HTTPMethod, _ path: String, json: JSONValue? = nil)
        throws(APIError) -> JSONValue
    {
        try Self.call(session, base: baseURL, method, path, json: json)
    }

    /// One call to the witness at `base` (nil: the sync server's own URL).
    static func call(
        _ session: ServerSession, base: String?, _ method: HTTPMethod, _ path: String, json: JSONValue? = nil
    ) throws(APIError) -> JSONValue {
        let api = session.api
        let base = base ?? api.baseURL
        guard WitnessSetting.sameURL(base, api.baseURL) else {
            return try api.witnessCall(method, path, json: json, token: nil, base: base)
        }
        return try session.authorized { token throws(APIError) in
            try api.witnessCall(method, path, json: json, token: token, base: base)
        }
    }

    /// Sends the latest checkpoint and records what the server said.
    /// Throws only when the ledger cannot be read or written.
    @discardableResult
    public func run(ledger: InspectionLedger, session: ServerSession, clock: any LedgerClock) throws -> Outcome {
        let api = session.api
        if let cosigning {
            let round = try cosigning.run(ledger: ledger, transport: api.transport, clock: clock)
            self.outcome = .cosigning(round)
            return .cosigning(round)
        }
        let key = try signingKey()
        let name = key.name
        let held: JSONValue
        do {
            held = try call(session, .get, "/ledger/checkpoints/latest?device=\(Self.query(name))")
        } catch {
            return try finish(Self.classify(error), ledger: ledger, api: api, clock: clock)
        }
        let heldSize = held["size"]?.integerValue.map { UInt64(max(0, $0)) }
        let heldRoot = held["root"]?.stringValue.flatMap { Data(base64Encoded: $0) }
        let (note, size, root, proof, upToDate) = try prepare(
            ledger: ledger, key: key, held: heldSize.map { ($0, heldRoot) })
        if upToDate, let heldSize {
            self.outcome = .upToDate(size: heldSize)
            return .upToDate(size: heldSize)
        }
        let body = JSONValue.object([
            "checkpoint": .string(note), "key": .string(key.verifierKey),
            "consistency": .array(proof.map { .string(Data($0.bytes).base64EncodedString()) }),
        ])
        let answer: JSONValue
        do {
            answer = try call(session, .post, "/ledger/checkpoints", json: body)
        } catch {
            return try finish(Self.classify(error), ledger: ledger, api: api, clock: clock)
        }
        // An acknowledgement names the very checkpoint sent; anything else
        // (another size, root or note, or none) is the witness failing.
        let sentRoot = Data(root.bytes).base64EncodedString()
        if let wrong = Self.mismatch(answer, note: note, size: size, root: sentRoot) {
            return try finish(.wrongAnswer(wrong), ledger: ledger, api: api, clock: clock)
        }
        return try finish(
            .acknowledged(size: size, previous: heldSize), ledger: ledger, api: api, clock: clock, root: sentRoot)
    }

    /// Today's signed checkpoint and the consistency proof from the held
    /// size, or `upToDate` when only the acknowledgement of the held
    /// checkpoint came after it (and the log still has its root there).
    private func prepare(ledger: InspectionLedger, key: NoteKey, held: (size: UInt64, root: Data?)?) throws
        -> (note: String, size: UInt64, root: Digest256, proof: [Digest256], upToDate: Bool)
    {
        let (device, name, heldSize, heldRoot) = (self.device, key.name, held?.size, held?.root)
        return try ledger.log.read { reader -> (String, UInt64, Digest256, [Digest256], Bool) in
            let size = try reader.treeSize()
            // Only the acknowledgement of the held checkpoint came after it, and
            // today's tree at the held size has the held root: nothing to witness.
            // (A log rewritten below it has another root, and is sent, to be refused.)
            if let heldSize, heldSize + 1 == size, let heldRoot,
                Data(try reader.treeRoot(size: heldSize).bytes) == heldRoot,
                let last = try reader.record(at: size), last.type == Self.eventType, last.stream == device
            {
                return ("", size, .zero, [], true)
            }
            // The root sent is checked against the records first (from the
            // checkpoint the server holds, else from every leaf): a damaged
            // tree is refused here, never signed. A held root the stored tree
            // does not have (a rewritten log) is checked from every leaf and
            // sent, for the server to refuse.
            let anchor = heldSize.flatMap { size in
                heldRoot.flatMap { Digest256(bytes: Array($0)) }.map { (size: size, root: $0) }
            }
            let checked: (size: UInt64, root: Digest256)
            do {
                checked = try reader.checkedTreeRoot(from: anchor)
            } catch is TreeCheckError where anchor != nil {
                checked = try reader.checkedTreeRoot(from: nil)
            }
            let checkpoint = Checkpoint(
                origin: name, size: checked.size, root: checked.root, heads: try reader.headMapRoot())
            var proof: [Digest256] = []
            if let heldSize, heldSize > 0, heldSize < size {
                proof = try reader.consistencyProof(from: heldSize, to: size)
            }
            return (try checkpoint.signed(by: key), size, checkpoint.root, proof, false)
        }
    }

    /// Why `answer` does not acknowledge the checkpoint sent (`note` of `size`
    /// records and `root`), or nil when it does. The note must come back
    /// exactly: it carries the device's signature, so an equal note is one
    /// with a valid signature over the same size and root.
    static func mismatch(_ answer: JSONValue, note: String, size: UInt64, root: String) -> String? {
        let answeredSize = answer["size"]?.integerValue
        let answeredRoot = answer["root"]?.stringValue
        let answeredNote = answer["checkpoint"]?.stringValue
        if answeredSize == Int64(exactly: size), answeredRoot == root, answeredNote == note { return nil }
        func shown(_ text: String?) -> String { text.map { TerminalText.singleLine(Redaction.text($0)) } ?? "none" }
        let what =
            answeredSize != Int64(exactly: size) || answeredRoot != root
            ? "a different checkpoint (\(answeredSize.map(String.init) ?? "no size") records, root \(shown(answeredRoot)))"
            : "a different signed note for the same size and root"
        return "the witness answered with \(what), not the one sent (\(size) records, root \(root))"
    }

    /// The last checkpoint a witness acknowledged for a device.
    public struct Held: Sendable, Equatable {
        public var note: String
        public var size: UInt64
        /// The root hash, as the witness states it (base64), if it does.
        public var root: Digest256?
        public var acknowledgedAt: String?

        public init(note: String, size: UInt64, root: Digest256?, acknowledgedAt: String?) {
            self.note = note
            self.size = size
            self.root = root
            self.acknowledgedAt = acknowledgedAt
        }
    }

    /// The last checkpoint the witness at `base` (nil: the sync server)
    /// acknowledged for the key name `jqc/<device id>`; nil when it holds
    /// none. A server without the extension answers `.refused(404, …)`. The
    /// session's token goes only to the sync server's own URL.
    public static func latest(session: ServerSession, name: String, base: String? = nil) throws(APIError) -> Held? {
        let held = try call(session, base: base, .get, "/ledger/checkpoints/latest?device=\(query(name))")
        guard let note = held["checkpoint"]?.stringValue, let size = held["size"]?.integerValue, size >= 0 else {
            return nil
        }
        let root = held["root"]?.stringValue.flatMap { Data(base64Encoded: $0) }.flatMap { Digest256(bytes: Array($0)) }
        return Held(note: note, size: UInt64(size), root: root, acknowledgedAt: held["acknowledged_at"]?.stringValue)
    }

    static func classify(_ error: APIError) -> Outcome {
        switch error {
        case .refused(404, _):
            .unsupported("the server has no witness endpoint (HTTP 404)")
        case .refused(409, let message):
            .refused(Redaction.text(message))
        default:
            .failed(error.description)
        }
    }

    static func query(_ text: String) -> String {
        // RFC 3986's unreserved characters as they are, every other UTF-8 byte as %XX.
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                encoded += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return encoded
    }

    /// Records the outcome in the device's stream (not a transient failure,
    /// and "unsupported" only when the last outcome recorded was not the same).
    private func finish(
        _ outcome: Outcome, ledger: InspectionLedger, api: APIClient, clock: any LedgerClock, root: String? = nil
    ) throws -> Outcome {
        self.outcome = outcome
        let server = baseURL ?? api.baseURL
        let witnessed: DeviceStreamEvent.CheckpointWitnessed
        switch outcome {
        case .acknowledged(let size, _):
            witnessed = .init(outcome: .acknowledged, server: server, size: size, root: root)
        case .unsupported(let why):
            if try Self.lastOutcome(in: ledger.log, device: device)?.outcome == .unsupported { return outcome }
            witnessed = .init(outcome: .unsupported, server: server, message: why)
        case .refused(let why):
            witnessed = .init(outcome: .refused, server: server, message: why)
        case .wrongAnswer(let why):
            witnessed = .init(outcome: .wrongAnswer, server: server, message: why)
        case .failed, .upToDate, .cosigning:
            return outcome
        }
        try ledger.record(
            [.recordWitness(witnessed)], onStreamOf: device,
            by: Actor(id: "device:\(device.lowercased)", name: "sync-worker", verified: true), clock: clock)
        return outcome
    }

    /// A `sync.checkpoint_witnessed` event as read back.
    public struct Recorded: Sendable {
        public var outcome: DeviceStreamEvent.WitnessOutcome
        public var size: UInt64?
        /// With `acknowledged`: the root sent (base64), when recorded.
        public var root: String?
        public var server: String?
        public var message: String?
        public var recordedAt: Timestamp
        public var position: UInt64
    }

    /// Every witness outcome recorded in the device's stream, oldest first.
    public static func recorded(in log: EventLog, device: UUID) throws -> [Recorded] {
        try log.read { reader in
            try reader.records(inStream: device).filter { $0.type == eventType }.map { record in
                var cbor = CBORReader(record.payload)
                let value = try cbor.readValue()
                return Recorded(
                    outcome: .init(rawValue: value["outcome"]?.textValue ?? ""),
                    size: value["size"]?.integerValue.map { UInt64($0) },
                    root: value["root"]?.textValue, server: value["server"]?.textValue,
                    message: value["message"]?.textValue,
                    recordedAt: record.recordedAt, position: record.position)
            }
        }
    }

    static func lastOutcome(in log: EventLog, device: UUID) throws -> Recorded? {
        try recorded(in: log, device: device).last
    }
}

extension APIClient {
    /// One call of the witness extension, through the same envelope rules as
    /// every other call (`ok: false`, `Retry-After`, the answer's size limit),
    /// at `base` when the witness is not the sync server.
    func witnessCall(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, token: String?, base: String? = nil
    ) throws(APIError) -> JSONValue {
        try call(method, path, json: json, token: token, base: base)
    }
}
