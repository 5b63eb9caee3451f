import FoundationEssentials
import LedgerCore

/// What a device asks to record on its own stream (the stream whose id is
/// its device id): `DeviceState.decide` turns it into events, or refuses it.
public enum DeviceCommand: Equatable, Sendable {
    /// Publish this device's signing key (`jqc init`, `jqc key rotate`).
    case publishKey(DeviceStreamEvent.KeyPublished)
    /// Pin another device's key, seen in a verified file (`jqc receive`).
    case pinKey(DeviceStreamEvent.KeyPinned)
    /// Keep two inconsistent checkpoints of another device as evidence.
    case recordFork(DeviceStreamEvent.ForkSeen)
    /// Record what the witness answered about this device's checkpoint.
    case recordWitness(DeviceStreamEvent.CheckpointWitnessed)
    /// Record a C2SP witness's verified cosignature of this device's checkpoint.
    case recordCosignature(DeviceStreamEvent.CheckpointCosigned)
}

/// This device's own stream, folded: the keys it published, the keys it
/// pinned of other devices, the forks it recorded, and how many records the
/// stream holds (the version a decision expects when it appends).
public struct DeviceState: Equatable, Sendable {
    public let device: UUID
    public var eventCount = 0
    /// Its own verifier keys, in the order published.
    public var publishedKeys: [String] = []
    /// Other devices' keys pinned here, by device.
    public var pinnedKeys: [UUID: [String]] = [:]
    public var forks: [DeviceStreamEvent.ForkSeen] = []

    public init(device: UUID) { self.device = device }

    /// Takes in one event of the stream (any record counts toward the version,
    /// one of a type this program does not know too).
    public mutating func apply(_ event: DeviceStreamEvent?) {
        eventCount += 1
        if case .keyPublished(let published) = event { publishedKeys.append(published.key) }
        if case .keyPinned(let pinned) = event { pinnedKeys[pinned.device, default: []].append(pinned.publicKey) }
        if case .forkSeen(let fork) = event { forks.append(fork) }
    }

    /// The events that carry out `command`: none when the stream holds it
    /// already (a key published last, a pin or a fork recorded before), so
    /// a command retried after a lost race records nothing twice.
    public func decide(_ command: DeviceCommand) throws(DomainError) -> [DeviceStreamEvent] {
        switch command {
        case .publishKey(let published):
            if publishedKeys.last == published.key { return [] }
            guard !publishedKeys.contains(published.key) else {
                throw .deviceStreamRefused(
                    device,
                    reason: "key \(published.key) was published before and replaced since; a device never "
                        + "goes back to an earlier key ('jqc key rotate' makes a new one)")
            }
            return [.keyPublished(published)]
        case .pinKey(let pin):
            return pinnedKeys[pin.device]?.contains(pin.publicKey) == true ? [] : [.keyPinned(pin)]
        case .recordFork(let fork):
            return forks.contains(fork) ? [] : [.forkSeen(fork)]
        case .recordWitness(let witnessed):
            return [.checkpointWitnessed(witnessed)]
        case .recordCosignature(let cosigned):
            return [.checkpointCosigned(cosigned)]
        }
    }
}
