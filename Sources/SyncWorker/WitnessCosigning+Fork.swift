import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// A C2SP witness that cosigned a history of this device this ledger does
/// not extend (`WitnessResult.forked`): both checkpoints, as far as each is
/// known. `tlog-witness` answers a conflict with the size it holds, never its
/// root, so the witness's root is known only when this log recorded that
/// witness cosigning that size; what the conflict proves is that the
/// witness's root at `heldSize` is not `oursAtHeld`.
public struct WitnessFork: Sendable, Equatable {
    public var witness: WitnessTarget
    /// The size of the checkpoint the witness holds (its 409, or the size it was re-proven from).
    public var heldSize: UInt64
    /// The witness's root at `heldSize`, when this log recorded it cosigning that size.
    public var theirs: Digest256?
    /// This ledger's root at `heldSize`, nil when the witness holds more records than this ledger.
    public var oursAtHeld: Digest256?
    /// This ledger's checkpoint, the one refused.
    public var ours: Checkpoint
    /// Its signed note.
    public var note: String

    static func base64(_ digest: Digest256) -> String { Data(digest.bytes).base64EncodedString() }

    /// Both checkpoints in words: the witness's (size, root or what it is
    /// not) and this ledger's (size, root).
    public var checkpoints: String {
        let witnessSide: String
        if let oursAtHeld {
            witnessSide =
                "the witness's checkpoint: \(heldSize) records, root "
                + (theirs.map(Self.base64) ?? "not this ledger's")
                + "; this ledger's root at \(heldSize) records: \(Self.base64(oursAtHeld))"
        } else {
            witnessSide =
                "the witness's checkpoint: \(heldSize) records, root " + (theirs.map(Self.base64) ?? "not known")
                + ", more records than this ledger holds"
        }
        return witnessSide + "; this ledger's checkpoint: \(ours.size) records, root \(Self.base64(ours.root))"
    }

    /// What the device's stream records of it (`sync.checkpoint_witnessed`,
    /// outcome `refused`, the witness's URL and held size).
    var recorded: DeviceStreamEvent.CheckpointWitnessed {
        .init(
            outcome: .refused, server: witness.url, size: heldSize, root: theirs.map(Self.base64),
            message: "FORK of this device: witness \(witness.key.name) cosigned a history of log \(ours.origin) "
                + "that this ledger does not extend (\(checkpoints))")
    }

    /// The fork found by `witness` holding `held` records, against today's
    /// checkpoint `signed`: this ledger's root at that size read from the
    /// log, the witness's from the cosignatures this log recorded.
    static func found(
        _ witness: WitnessTarget, held: UInt64, signed: WitnessCosigning.Signed, ledger: InspectionLedger,
        recorded: [DeviceStreamEvent.CheckpointCosigned]
    ) throws -> WitnessFork {
        let size = signed.checkpoint.size
        let oursAtHeld = try ledger.log.read { reader in
            held > 0 && held <= size ? try reader.treeRoot(size: held) : nil
        }
        let theirs = recorded.last {
            $0.witness == witness.key.name && $0.keyID == Hex.encode(witness.key.keyID) && $0.size == held
        }
        .flatMap { Data(base64Encoded: $0.root) }.flatMap { Digest256(bytes: Array($0)) }
        return WitnessFork(
            witness: witness, heldSize: held, theirs: theirs == oursAtHeld ? nil : theirs, oursAtHeld: oursAtHeld,
            ours: signed.checkpoint, note: signed.note)
    }
}

extension WitnessCosigning {
    /// Records each fork of the round in the device's stream (decided on
    /// `DeviceState`), unless the last outcome recorded from that witness
    /// is already a fork at the same size: a fork seen again each sync
    /// (`--watch`) is evidence once, not a record every interval.
    func recordForks(_ results: [WitnessResult], ledger: InspectionLedger, clock: any LedgerClock) throws {
        let forks = results.compactMap { result -> WitnessFork? in
            if case .forked(let fork) = result { return fork }
            return nil
        }
        guard !forks.isEmpty else { return }
        let earlier = try CheckpointWitness.recorded(in: ledger.log, device: device)
        let new = forks.filter { fork in
            let last = earlier.last { $0.server == fork.witness.url }
            return !(last?.outcome == .refused && last?.size == fork.heldSize)
        }
        guard !new.isEmpty else { return }
        try ledger.record(
            new.map { DeviceCommand.recordWitness($0.recorded) }, onStreamOf: device,
            by: Actor(id: "device:\(device.lowercased)", name: "sync-worker", verified: true), clock: clock)
    }

    /// The last fork of this device a witness reported, as the device's
    /// stream records it: what `jqc status` and `jqc audit` name (nil: none).
    public static func recordedFork(in log: EventLog, device: UUID) throws -> CheckpointWitness.Recorded? {
        lastFork(in: try CheckpointWitness.recorded(in: log, device: device))
    }

    /// The last fork among witness outcomes already read (`CheckpointWitness.recorded`).
    public static func lastFork(in recorded: [CheckpointWitness.Recorded]) -> CheckpointWitness.Recorded? {
        recorded.last { $0.outcome == .refused && $0.message?.hasPrefix("FORK of this device") == true }
    }

    /// The fork in one line for `status` and `audit`, with when it was recorded.
    public static func forkLine(_ fork: CheckpointWitness.Recorded) -> String {
        "\(fork.message ?? "FORK of this device") (\(fork.server ?? "a witness"), recorded at "
            + "\(fork.recordedAt.iso8601), record \(fork.position)); keep this ledger as it is and report it"
    }
}

extension WitnessSetting {
    /// The witnesses as `jqc status` names them (`described`), followed by
    /// the last fork of this device a witness reported, when there is one.
    public static func described(_ config: LedgerConfig, directory: LedgerDirectory, log: EventLog) throws -> String? {
        let named = try described(config, directory: directory)
        guard let fork = try WitnessCosigning.recordedFork(in: log, device: config.deviceID) else { return named }
        return (named.map { $0 + "; " } ?? "") + WitnessCosigning.forkLine(fork)
    }
}
