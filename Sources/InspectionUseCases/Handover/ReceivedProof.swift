import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import SyncWorker

/// The other device's part of a received inspection, proven again as that
/// device's: each `inspection.received` keeps the sender's records with their
/// inclusion proofs, its signed checkpoint and its key, and is checked here as
/// `jqc receive` checked the file (photo files apart: the audit checks the
/// photo store). The reception record itself is proven through this log's tree.
public enum ReceivedProof {
    /// The witness an audit asks about the sender's checkpoint: the one
    /// configured in this ledger (`witness_url`), and how to ask it for a
    /// device's latest checkpoint (`GET /ledger/checkpoints/latest?device=`).
    public struct SenderWitness {
        public var url: String
        public var latest: (_ keyName: String) throws -> CheckpointWitness.Held?

        public init(url: String, latest: @escaping (_ keyName: String) throws -> CheckpointWitness.Held?) {
            self.url = url
            self.latest = latest
        }
    }

    /// One line per reception in `timeline`, saying which device recorded
    /// what and what proves it; with `witness`, a line saying whether the
    /// sender's part is witnessed.
    ///
    /// With `pins`, each line also says whether the key the sender's part is
    /// proven with is the key this ledger pinned for that device.
    public static func notes(of timeline: AuditTimeline, witness: SenderWitness? = nil, pins: DevicePins? = nil)
        -> [String]
    {
        var lines: [String] = []
        let held = Held(timeline)
        for entry in timeline.entries {
            guard entry.carriedIn == nil, case .received(let received)? = entry.event else { continue }
            var (line, size) = note(entry, received, timeline, held: held)
            if let pins, size != nil { line += "; " + pinLine(received, pins) }
            lines.append(line)
            // Only a part that verifies is compared with the witness.
            if let witness, let size { lines.append(witnessed(received, size: size, by: witness)) }
        }
        return lines
    }

    /// Whether the key a reception was proven with is pinned here, and how.
    static func pinLine(_ received: InspectionReceived, _ pins: DevicePins) -> String {
        let keys = pins.devices[received.fromDevice]?.keys ?? []
        let id = DeviceKeyFile.keyID(received.publicKey)
        guard let pinned = keys.first(where: { $0.key == received.publicKey }) else {
            return "its key \(id) is NOT a key this ledger pinned for that device"
        }
        switch pinned.source {
        case .event(let position, _):
            return "its key \(id) is the key pinned for that device (device.key_pinned at position \(position))"
        case .reception(let position):
            return "its key \(id) is the key pinned for that device (from the reception at position \(position), "
                + "recorded before pins were)"
        }
    }

    /// Whether the witness holds the sender's checkpoint this reception is
    /// proven against: the same size and root (witnessed), a later one (that
    /// it extends the sender's is not proven: the file carries no
    /// consistency proof to it), an earlier one or none (not witnessed), or
    /// another tree of the same size (two histories of one device).
    public static func witnessed(_ received: InspectionReceived, size: UInt64, by witness: SenderWitness) -> String {
        let device = received.fromDevice.lowercased
        let prefix = "sender's witness: the records of device \(device)"
        let key: NoteKey
        let signed: Checkpoint
        do {
            key = try NoteKey(parsing: received.publicKey)
            signed = try Checkpoint(verifying: received.checkpoint, key: key)
        } catch {
            return "\(prefix) could not be compared with the witness: \(error)"
        }
        let held: CheckpointWitness.Held?
        do {
            held = try witness.latest(key.name)
        } catch {
            return "\(prefix) are NOT witnessed: the witness \(witness.url) could not be asked (\(error))"
        }
        guard let held else {
            return "\(prefix) are NOT witnessed: the witness \(witness.url) holds no checkpoint of that device"
        }
        let witnessed: Checkpoint
        do {
            witnessed = try Checkpoint(verifying: held.note, key: key)
        } catch {
            return "\(prefix): the checkpoint the witness \(witness.url) holds for that device does NOT verify with "
                + "the sender's key (\(error))"
        }
        let when = held.acknowledgedAt.map { ", acknowledged \($0)" } ?? ""
        if witnessed.size == signed.size {
            if witnessed.root == signed.root {
                return "\(prefix) are witnessed: the witness \(witness.url) acknowledged the very checkpoint of "
                    + "\(size) records they are proven against\(when)"
            }
            return "\(prefix): NOT CONSISTENT: the witness \(witness.url) holds another tree of \(size) records of "
                + "that device than the one its handover was signed over\(when): two histories of one device"
        }
        if witnessed.size > signed.size {
            return "\(prefix): the witness \(witness.url) holds a later checkpoint of \(witnessed.size) records of "
                + "that device\(when); that it extends the sender's checkpoint of \(size) records is not proven "
                + "here (the handover carries no consistency proof to it)"
        }
        return "\(prefix) are NOT witnessed: the witness \(witness.url) holds only a checkpoint of \(witnessed.size) "
            + "records of that device\(when), older than the sender's of \(size)"
    }

    /// The line of one reception, and the size of the sender's checkpoint
    /// when its part verifies.
    static func note(
        _ entry: TimelineEntry, _ received: InspectionReceived, _ timeline: AuditTimeline, held: Held
    ) -> (
        String, UInt64?
    ) {
        let who = "device \(received.fromDevice.lowercased)"
        let records: [EventRecord]
        do {
            records = try received.resolvedRecords()
        } catch {
            return ("NOT VERIFIED: the records of \(who) carried at position \(entry.position): \(error)", nil)
        }
        let first = received.firstVersion
        let continuing =
            received.continues.map { ", continuing version \($0.streamVersion) held from an earlier reception" } ?? ""
        let span =
            records.isEmpty
            ? "no records"
            : "\(records.count) records (stream versions \(first)–\(first - 1 + UInt64(records.count)), positions "
                + "\(records.first?.position ?? 0)–\(records.last?.position ?? 0) of its log\(continuing))"
        do throws(Reception.Refusal) {
            let recorder = entry.record.map { Held.Recorder(device: $0.device, version: $0.streamVersion) }
            let size = try verify(received, inspection: timeline.inspectionID, held: held, recordedAs: recorder)
            return (
                "the records of \(who): \(span), proven against its signed checkpoint of \(size) records "
                    + "(key \(received.publicKey.split(separator: "+").first ?? "")); carried by the reception at "
                    + "position \(entry.position), which this log's own proof covers", size
            )
        } catch {
            return ("NOT VERIFIED: the records of \(who) carried at position \(entry.position): \(error.reason)", nil)
        }
    }

    /// What an audit holds beside a version-3 reception: the bytes of a
    /// record by leaf (the `carried` table, this log's own records), and the
    /// template hash the inspection started with (its start is in an
    /// earlier reception).
    public struct Held {
        public var record: (Digest256) -> [UInt8]?
        public var templateHash: String?
        /// The receptions held, by the device that recorded them and the
        /// device they came from: where a version-3 reception's
        /// continuation must be referenced. Nil: not known (only that the
        /// continued record is held is checked).
        public var receptions: [Pair: [HeldReception]]?

        /// A device that recorded receptions, and the device they came from.
        public struct Pair: Hashable, Sendable {
            public var recorder: UUID
            public var from: UUID
        }

        /// The reception recorded at `version` of its recorder's stream,
        /// carrying the sender's versions `firstVersion …` (their leaves).
        public struct HeldReception: Sendable {
            public var version: UInt64
            public var firstVersion: UInt64
            public var leaves: [Digest256]
        }

        /// The device and stream version of a reception being checked.
        public struct Recorder: Sendable {
            public var device: UUID
            public var version: UInt64
        }

        public init(templateHash: String?, record: @escaping (Digest256) -> [UInt8]?) {
            self.record = record
            self.templateHash = templateHash
        }

        /// What `timeline` holds: its closure, and its own records.
        public init(_ timeline: AuditTimeline) {
            var own = CarriedRecords()
            for entry in timeline.entries where entry.carriedIn == nil {
                if let record = entry.record { own.insert(record.encoded()) }
            }
            let carried = timeline.carried.merging(own)
            self.init(templateHash: timeline.state.templateHash.isEmpty ? nil : timeline.state.templateHash) {
                carried.record($0)
            }
            var receptions: [Pair: [HeldReception]] = [:]
            for entry in timeline.entries {
                guard case .received(let received)? = entry.event, let record = entry.record else { continue }
                receptions[Pair(recorder: record.device, from: received.fromDevice), default: []].append(
                    HeldReception(
                        version: record.streamVersion, firstVersion: received.firstVersion,
                        leaves: received.records.map(\.leaf)))
            }
            self.receptions = receptions
        }

        /// Whether a reception `recorder` recorded from `from` before
        /// `version` references `continues` (its leaf at its version), or
        /// nil when the receptions are not known.
        func referencedEarlier(_ continues: InspectionReceived.Continuation, from: UUID, by recorder: Recorder)
            -> Bool?
        {
            guard let receptions else { return nil }
            return (receptions[Pair(recorder: recorder.device, from: from)] ?? []).contains { earlier in
                guard earlier.version < recorder.version, continues.streamVersion >= earlier.firstVersion else {
                    return false
                }
                let index = continues.streamVersion - earlier.firstVersion
                return index < UInt64(earlier.leaves.count) && earlier.leaves[Int(index)] == continues.leaf
            }
        }
    }

    /// A version-3 reception's continuation, checked against what is held:
    /// the record it continues must be held here, and be version s − 1 of
    /// the sender's stream of this inspection, and, when `recorder` (who
    /// recorded the reception, at which version) is given, an earlier
    /// reception of that recorder from the same sender must reference it:
    /// a leaf held only through another device's reception continues
    /// nothing. A gap is a refusal (the audit's unproven part), never
    /// passed over.
    static func checkContinuation(
        _ received: InspectionReceived, inspection: UUID, held: Held?, recordedAs recorder: Held.Recorder? = nil
    ) throws(Reception.Refusal) {
        guard let continues = received.continues else { return }
        let continued = Reception.Refusal.Continued(
            version: continues.streamVersion, device: received.fromDevice, leaf: continues.leaf)
        guard let held, let bytes = held.record(continues.leaf) else {
            throw .continuationNotHeld(continued)
        }
        // A held record that does not decode is not the continued version: refused as such.
        guard let record = try? EventRecord(decoding: bytes), record.device == received.fromDevice,
            record.stream == inspection, record.streamVersion == continues.streamVersion
        else {
            throw .continuationNotThatRecord(continued)
        }
        if let recorder, held.referencedEarlier(continues, from: received.fromDevice, by: recorder) == false {
            throw .continuationNotTheRecorders(continued, recorder: recorder.device)
        }
    }

    /// Checks the carried part; the size of the sender's checkpoint. A
    /// version-3 reception (versions s … k) is checked against `held`: the
    /// record it continues, and the inspection's template.
    /// `recordedAs`: who recorded the reception and at which version, for
    /// the continuation's check against that recorder's earlier receptions.
    public static func verify(
        _ received: InspectionReceived, inspection: UUID, held: Held? = nil, recordedAs: Held.Recorder? = nil
    ) throws(Reception.Refusal) -> UInt64 {
        try checkContinuation(received, inspection: inspection, held: held, recordedAs: recordedAs)
        func entry(_ carried: CarriedRecord, _ path: String) -> HandoverFile.Entry {
            // Only for the bundle's shape: a record that does not decode
            // fails the bundle's own check, named by its path.
            let decoded = try? EventRecord(decoding: carried.record)
            return HandoverFile.Entry(
                position: carried.position, streamVersion: decoded?.streamVersion ?? 0, type: decoded?.type ?? "",
                record: carried.record, inclusion: carried.inclusion, path: path)
        }
        var records: [HandoverFile.Entry] = []
        var photos: [HandoverFile.Photo] = []
        do {
            for (index, (reference, bytes)) in zip(received.records, try received.resolvedBytes()).enumerated() {
                records.append(
                    entry(
                        CarriedRecord(position: reference.position, record: bytes, inclusion: reference.inclusion),
                        "records[\(index)]"))
            }
            for (record, captured) in try received.photoCaptures() {
                photos.append(
                    HandoverFile.Photo(
                        photoID: captured.photo.photoID, sha256: captured.photo.sha256, position: record.position))
            }
        } catch {
            throw .carriedRecords(why: "\(error)")
        }
        let file = HandoverFile(
            mode: received.mode, to: nil, fromDevice: received.fromDevice, inspection: inspection,
            checkpoint: received.checkpoint, publicKey: received.publicKey,
            keyRecord: entry(received.keyRecord, "key_record"), records: records, photos: photos,
            templateRecord: entry(received.templateRecord, "template_record"), photoFiles: [],
            carriedRecords: received.carried)
        let verified = try HandoverVerification.verify(
            file, checkingPhotoFiles: false, checkingTo: false, continuing: received.continues,
            startedTemplateHash: held?.templateHash)
        return verified.checkpointSize
    }
}
