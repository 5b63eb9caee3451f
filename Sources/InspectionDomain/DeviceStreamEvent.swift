import Foundation
import LedgerCore

/// The events of a device's own stream (stream = the device id), typed and
/// decoded like the inspection events: the signing key it published
/// (`device.key_published`) and what a witness said of its checkpoint
/// (`sync.checkpoint_witnessed`). The log stores them as any event; the
/// inspection fold leaves them alone (`InspectionEvent.unrecognized`), and
/// `DeviceStreamEvent(stored)` reads one back for wording and audits.
public enum DeviceStreamEvent: Equatable, Sendable {
    case keyPublished(KeyPublished)
    case checkpointWitnessed(CheckpointWitnessed)

    public static let keyPublishedType = "device.key_published"
    public static let checkpointWitnessedType = "sync.checkpoint_witnessed"

    /// `device.key_published` v1 (`Schemas/events/device.key_published.schema.json`).
    public struct KeyPublished: Equatable, Sendable {
        /// The C2SP verifier key: `jqc/<device>+<key id>+<base64>`.
        public var key: String
        public var algorithm: String
        /// A rotation's endorsement by the previous key, when there is one.
        public var endorsement: String?
        /// A rotation declared without the previous key (`--old-key-lost`).
        public var previousKeyLost: Bool

        /// The key id: the 8 hex digits between the `+`s of the verifier key.
        public var keyID: String {
            let parts = key.split(separator: "+", omittingEmptySubsequences: false)
            return parts.count == 3 ? String(parts[1]) : key
        }
    }

    /// `sync.checkpoint_witnessed` v1 (`Schemas/events/sync.checkpoint_witnessed.schema.json`).
    public struct CheckpointWitnessed: Equatable, Sendable {
        /// `acknowledged`, `refused`, `unsupported` or `wrong_answer`.
        public var outcome: String
        public var server: String
        public var size: UInt64?
        public var message: String?
    }

    /// The event a stored payload holds, or nil when it is of another type
    /// or version, or its payload does not fit its schema.
    public init?(_ stored: StoredPayload) {
        guard stored.schemaVersion == 1 else { return nil }
        var reader = CBORReader(stored.payload)
        guard let value = try? reader.readValue(), case .map = value else { return nil }
        switch stored.type {
        case Self.keyPublishedType:
            guard let key = value["key"]?.textValue, let algorithm = value["algorithm"]?.textValue else { return nil }
            var lost = false
            if case .bool(let flag) = value["previous_key_lost"] { lost = flag }
            self = .keyPublished(
                KeyPublished(
                    key: key, algorithm: algorithm, endorsement: value["endorsement"]?.textValue, previousKeyLost: lost)
            )
        case Self.checkpointWitnessedType:
            guard let outcome = value["outcome"]?.textValue, let server = value["server"]?.textValue else {
                return nil
            }
            self = .checkpointWitnessed(
                CheckpointWitnessed(
                    outcome: outcome, server: server, size: value["size"]?.integerValue.map { UInt64(max(0, $0)) },
                    message: value["message"]?.textValue))
        default:
            return nil
        }
    }
}
