import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Whether a verified handover file may be believed as the device it names:
/// what `HandoverVerification` cannot know from the file alone, judged
/// against what this ledger already holds (`DevicePins`). Three rules
/// (`Schemas/ledger-format.md` § Handover files, `docs/architecture/trust.md`):
///
/// 1. **Pinned keys.** The first verified file from a device pins its key
///    (`device.key_pinned`, recorded with the reception); a later file under
///    that device's name must be signed by a pinned key, or carry as its key
///    record that device's rotation endorsed by a pinned key. `--key VKEY`
///    pins the key the person holds, whatever was pinned before.
/// 2. **One history per device.** The file's checkpoint must be consistent
///    with every checkpoint of that device held here: not one size with two
///    roots, nor a record at one position proven with two leaves. Otherwise
///    the fork is recorded (`device.fork_seen`) and the file refused.
/// 3. **A copy is a copy.** A file of an inspection held here must start
///    with the very `inspection.started` record held here (the same bytes),
///    and no record it carries, at any depth, may reuse the id of a record
///    held here with other bytes.
public struct SenderTrust {
    public let ledger: InspectionLedger
    /// This device's id: its own stream records the pins and forks.
    public let device: UUID

    public init(ledger: InspectionLedger, device: UUID) {
        self.ledger = ledger
        self.device = device
    }

    /// Why a verified file is not believed. Nothing of the file is recorded;
    /// a fork is recorded on its own, as evidence.
    public enum Distrust: Error, CustomStringConvertible, Equatable {
        /// Signed by a key this ledger never pinned for that device.
        case otherKey(device: UUID, fileKey: String, pinned: [String])
        /// `--key` names another key than the file's.
        case notTheGivenKey(device: UUID, fileKey: String, given: String)
        /// `--key` is not a verifier key of that device.
        case givenKeyUnusable(device: UUID, given: String, why: String)
        /// Two histories of one device; `recorded` when this reception
        /// recorded the `device.fork_seen` (false: it was recorded before).
        case fork(DeviceStreamEvent.ForkSeen, firstHeldBy: String, why: String, recorded: Bool)
        /// The file's inspection starts with another record than the one held here.
        case otherStart(inspection: UUID, held: UUID, theirs: UUID)
        /// A record of the file reuses the id of a record held here.
        case otherBytes(inspection: UUID, event: UUID)

        public var description: String {
            switch self {
            case .otherKey(let device, let fileKey, let pinned):
                let ids = pinned.map(DeviceKeyFile.keyID).joined(separator: ", ")
                return "NOT VERIFIED: the file names device \(device.lowercased) as its sender, but it is signed by "
                    + "key \(DeviceKeyFile.keyID(fileKey)), and this ledger pinned key \(ids) for that device from "
                    + "its earlier files; the file's key record is no rotation endorsed by the pinned key, so the "
                    + "file may come from another device using that name; nothing was recorded. Ask the owner of "
                    + "device \(device.lowercased.prefix(8)) which key it signs with ('jqc key' on that device): "
                    + "if it replaced its key without the old one, receive the file with 'jqc receive FILE --key "
                    + "VKEY' giving the key it shows."
            case .notTheGivenKey(let device, let fileKey, let given):
                return "NOT VERIFIED: the file of device \(device.lowercased) is signed by key "
                    + "\(DeviceKeyFile.keyID(fileKey)), not by the key given with --key "
                    + "(\(DeviceKeyFile.keyID(given))); nothing was recorded. Check the key with the device's "
                    + "owner ('jqc key' on that device)."
            case .givenKeyUnusable(let device, let given, let why):
                return "NOT VERIFIED: the key given with --key (\(TerminalText.singleLine(given))) is not a verifier "
                    + "key of device \(device.lowercased): \(why); nothing was recorded. Give the key 'jqc key' shows "
                    + "on that device."
            case .fork(let fork, let firstHeldBy, let why, let recorded):
                return "NOT VERIFIED: device \(fork.device.lowercased) has two histories: this ledger holds its "
                    + "checkpoint of \(fork.first.size) records with root \(fork.first.root) (\(firstHeldBy)), and "
                    + "this file is signed over a checkpoint of \(fork.second.size) records with root "
                    + "\(fork.second.root): \(why). Both are signed by that device's key, so two ledgers record "
                    + "under its id (a backup or copy used as a second device) or its key signed a rewritten log. "
                    + "Nothing of the file was recorded, "
                    + (recorded
                        ? "but the fork itself was recorded as evidence (device.fork_seen), "
                        : "and the fork was recorded as evidence (device.fork_seen) before, ")
                    + "and 'jqc audit' of any inspection that device touched says FORKED. Find out which ledger is "
                    + "the device's own; the other must get its own device id ('jqc init' in a new directory)."
            case .otherStart(let inspection, let held, let theirs):
                return "NOT VERIFIED: the file's inspection \(inspection.lowercased) starts with the record "
                    + "\(theirs.lowercased), which is not the inspection.started record \(held.lowercased) this "
                    + "device holds for that inspection (same bytes required): it is not a copy of the inspection "
                    + "held here; nothing was recorded. Ask the sender where its copy came from."
            case .otherBytes(let inspection, let event):
                return "NOT VERIFIED: the file of inspection \(inspection.lowercased) carries a record with id "
                    + "\(event.lowercased) whose bytes differ from the record of that id this device holds: a "
                    + "record held here was changed; nothing was recorded. Ask the sender for a file written from "
                    + "an unchanged copy."
            }
        }
    }

    /// What a believed file adds beside its reception: the key it pins, when
    /// it is not pinned yet.
    public struct Trusted: Sendable, Equatable {
        public var events: [DeviceStreamEvent]

        /// The commands for this device's own stream, decided and recorded
        /// in the reception's transaction (`RecordingPlan.beside`).
        public var commands: [DeviceCommand] {
            events.compactMap { event in
                guard case .keyPinned(let pin) = event else { return nil }
                return .pinKey(pin)
            }
        }
    }

    /// Two histories of one device found by `check`: the fork to record as
    /// evidence (unless `alreadyHeld`) before the file is refused with
    /// `Distrust.fork`. Thrown out of the reception's read snapshot, since a
    /// snapshot records nothing.
    public struct ForkFound: Error {
        public var fork: DeviceStreamEvent.ForkSeen
        public var heldBy: String
        public var why: String
        public var alreadyHeld: Bool

        /// The refusal to give once the fork is recorded (or was before).
        public var refusal: Distrust {
            .fork(fork, firstHeldBy: heldBy, why: why, recorded: !alreadyHeld)
        }
    }

    /// Checks `file` (already verified by `HandoverVerification`) against
    /// what this ledger holds, in the reception's read snapshot `reader`;
    /// `stream` is the inspection's records there (empty when it is new
    /// here); `given` the `--key` of the person. Throws `Distrust`, or
    /// `ForkFound` for the caller to record before it refuses.
    public func check(
        _ file: HandoverFile, sha256: Digest256, stream: [EventRecord], given: String?, reader: LedgerReader
    ) throws -> Trusted {
        // A file under this device's own id is the reception's own refusal
        // (its own file, or two ledgers sharing an id).
        guard file.fromDevice != device else { return Trusted(events: []) }
        // The receptions through their view, in the reception's own snapshot
        // (a damaged view row is thrown as `ViewDamage`, which names the fix).
        let pins = try DevicePins.read(
            reader, own: device, receptionRecords: try ledger.receptionRecords(in: reader))
        let held = pins.devices[file.fromDevice]
        let pin = try Self.keyDecision(file, sha256: sha256, held: held, given: given)
        if let fork = try Self.fork(file, held: held) {
            throw ForkFound(
                fork: fork.event, heldBy: fork.heldBy, why: fork.why,
                alreadyHeld: held?.forks.contains(fork.event) ?? false)
        }
        if !stream.isEmpty { try copyRule(file, stream: stream, reader: reader) }
        return Trusted(events: pin.map { [.keyPinned($0)] } ?? [])
    }

    // MARK: - 1. Pinned keys

    /// The pin to record (nil: the file's key is pinned already), or the refusal.
    static func keyDecision(
        _ file: HandoverFile, sha256: Digest256, held: DevicePins.Device?, given: String?
    ) throws(Distrust) -> DeviceStreamEvent.KeyPinned? {
        let device = file.fromDevice
        let fileKey = file.publicKey
        let pinned = held?.keys.map(\.key) ?? []
        let pin = DeviceStreamEvent.KeyPinned(
            device: device, publicKey: fileKey, keyID: DeviceKeyFile.keyID(fileKey), fileSHA256: sha256)
        if let given {
            let key: NoteKey
            do {
                key = try NoteKey(parsing: given)
            } catch {
                throw .givenKeyUnusable(device: device, given: given, why: "\(error)")
            }
            // The file's key is named for its device (checked by the
            // verification), so a key equal to it is that device's.
            guard key.verifierKey == fileKey else {
                throw .notTheGivenKey(device: device, fileKey: fileKey, given: key.verifierKey)
            }
            // The person's own copy of the key decides, whatever was pinned.
            return pinned.contains(fileKey) ? nil : pin
        }
        if pinned.isEmpty { return pin }
        if pinned.contains(fileKey) { return nil }
        // Every pinned key was a verified file's key; one that no longer
        // parses (a damaged payload) can endorse nothing, and the file is
        // then refused as signed by an unpinned key.
        let endorsers = pinned.compactMap { try? NoteKey(parsing: $0) }
        if let endorsement = rotationEndorsement(file.keyRecord.record),
            endorsers.contains(where: { endorses(endorsement, key: fileKey, by: $0) })
        {
            return pin
        }
        throw .otherKey(device: device, fileKey: fileKey, pinned: pinned)
    }

    /// The endorsement of the `device.key_published` record `bytes`, when it is a rotation.
    static func rotationEndorsement(_ bytes: [UInt8]) -> String? {
        // The bundle check proved the record and that its key is the file's;
        // a record that does not read carries no endorsement.
        guard let record = try? EventRecord(decoding: bytes),
            case .keyPublished(let published)? = DeviceStreamEvent.decodeStored(record)
        else { return nil }
        return published.endorsement
    }

    /// Whether `endorsement` is exactly what `jqc key rotate` writes for
    /// `key` (`DeviceIdentity.endorsement`): the text `jqc key rotation`, the
    /// key's name and the verifier key, as a signed note signed by `old`.
    static func endorses(_ endorsement: String, key: String, by old: NoteKey) -> Bool {
        // The file's key parsed in the verification; anything else endorses nothing.
        guard let new = try? NoteKey(parsing: key), new.name == old.name else { return false }
        let text = "jqc key rotation\n\(new.name)\n\(new.verifierKey)\n"
        guard endorsement.hasPrefix(text + "\n") else { return false }
        for line in endorsement.dropFirst(text.utf8.count + 1).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[0] == "\u{2014}", fields[1] == old.name,
                let blob = Data(base64Encoded: String(fields[2])).map(Array.init), blob.count == 68,
                Array(blob[0..<4]) == old.keyID
            else { continue }
            if Ed25519.verify(signature: Array(blob[4...]), of: Array(text.utf8), publicKey: old.publicKey) {
                return true
            }
        }
        return false
    }

    // MARK: - 2. Forks

    /// The first held checkpoint of the sender that the file's contradicts.
    static func fork(_ file: HandoverFile, held: DevicePins.Device?) throws -> (
        event: DeviceStreamEvent.ForkSeen, heldBy: String, why: String
    )? {
        guard let held, !held.checkpoints.isEmpty else { return nil }
        // Verified already by `HandoverVerification`; read again for its size and root.
        let key = try NoteKey(parsing: file.publicKey)
        let signed = try Checkpoint(verifying: file.checkpoint, key: key)
        let chain = HashChain()
        var leaves: [UInt64: Digest256] = [:]
        for entry in file.records + [file.keyRecord, file.templateRecord] {
            leaves[entry.position] = chain.leaf(ofRecord: entry.record)
        }
        let second = DevicePins.HeldCheckpoint(
            size: signed.size, root: signed.root, note: file.checkpoint, leaves: leaves, heldBy: "this file")
        for first in held.checkpoints {
            guard let why = contradiction(first, second) else { continue }
            return (
                DeviceStreamEvent.ForkSeen(device: file.fromDevice, first: first.seen, second: second.seen),
                first.heldBy, why
            )
        }
        return nil
    }

    /// Why two checkpoints of one device cannot both be its history, or nil
    /// when nothing held shows it (without a consistency proof between two
    /// sizes, only the records each proved can be compared).
    static func contradiction(_ a: DevicePins.HeldCheckpoint, _ b: DevicePins.HeldCheckpoint) -> String? {
        if a.size == b.size {
            return a.root == b.root ? nil : "one size with two roots"
        }
        for (position, leaf) in a.leaves.sorted(by: { $0.key < $1.key }) {
            if let other = b.leaves[position], other != leaf {
                return "the record at position \(position) of its log is proven in each with a different leaf "
                    + "(\(leaf.hex.prefix(16))… and \(other.hex.prefix(16))…), so the smaller tree is not a prefix of "
                    + "the larger"
            }
        }
        return nil
    }

    // MARK: - 3. A copy is a copy

    /// Refuses a file of an inspection held here that does not start with
    /// the start held here, byte for byte, or reuses a held record's id with
    /// other bytes.
    func copyRule(_ file: HandoverFile, stream: [EventRecord], reader: LedgerReader) throws {
        let inspection = file.inspection
        var heldBytes: [UUID: [UInt8]] = [:]
        var heldStart: EventRecord?
        // One closure and one visited set for the whole stream: a later
        // reception carries the earlier ones again.
        let memo = StreamClosures()
        var seen: Set<[UInt8]> = []
        for record in stream {
            let event = try CarriedClosure.event(of: record, reader: reader, memo: memo)
            heldBytes[record.id] = record.encoded()
            if record.type == InspectionEventType.started.rawValue, heldStart == nil { heldStart = record }
            guard case .received(let received) = event else { continue }
            for carried in try Self.everyRecord(of: received, seen: &seen) {
                heldBytes[carried.record.id] = carried.bytes
                if carried.record.type == InspectionEventType.started.rawValue, heldStart == nil {
                    heldStart = carried.record
                }
            }
        }
        let theirs = try Self.everyRecord(of: file.reception(sha256: .zero))
        if let heldStart {
            let bytes = heldStart.encoded()
            for start in theirs where start.record.type == InspectionEventType.started.rawValue && start.bytes != bytes
            {
                throw Distrust.otherStart(inspection: inspection, held: heldStart.id, theirs: start.record.id)
            }
        }
        // Held here, or met earlier in the file itself: one id, one record.
        for carried in theirs {
            if let bytes = heldBytes[carried.record.id], bytes != carried.bytes {
                throw Distrust.otherBytes(inspection: inspection, event: carried.record.id)
            }
            heldBytes[carried.record.id] = carried.bytes
        }
    }

    /// Every record a reception carries, at any depth, in order (a
    /// reception's own records, then what each carried reception carries),
    /// each byte string once; walked with a list rather than recursion, so a file's
    /// nesting cannot exhaust the stack.
    static func everyRecord(of received: InspectionReceived) throws -> [(record: EventRecord, bytes: [UInt8])] {
        var seen: Set<[UInt8]> = []
        return try everyRecord(of: received, seen: &seen)
    }

    /// `everyRecord(of:)` over several receptions of one stream: what
    /// `seen` holds (met through an earlier one) is not read again.
    static func everyRecord(
        of received: InspectionReceived, seen: inout Set<[UInt8]>
    ) throws -> [(record: EventRecord, bytes: [UInt8])] {
        var found: [(record: EventRecord, bytes: [UInt8])] = []
        var pending = [received]
        while let next = pending.popLast() {
            for bytes in try next.resolvedBytes() {
                // The same record met twice (a reception carried again) is
                // read once; one id with two byte strings is kept twice, for
                // the caller to refuse.
                guard seen.insert(bytes).inserted else { continue }
                let record = try EventRecord(decoding: bytes)
                found.append((record, bytes))
                if record.type == InspectionEventType.received.rawValue,
                    case .received(let nested) = try next.event(of: record, template: nil)
                {
                    pending.append(nested)
                }
            }
        }
        return found
    }
}
