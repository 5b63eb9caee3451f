import Foundation
import LedgerCore

/// Builds plausible events for tests of the log itself.
public enum SampleEvents {
    public static let actor = Actor(id: "u-7", name: "Dana Inspector", verified: true)
    public static let device = UUID(uuidString: "00000000-0000-4000-8000-00000000d001")!

    /// An event with a small text-keyed payload.
    public static func event(
        stream: UUID, type: String = "test.noted", note: String = "hello", at time: Timestamp,
        id: UUID = UUID()
    ) -> PendingEvent {
        let payload = CBORValue.textMap([("note", .text(note)), ("n", .unsigned(UInt64(note.utf8.count)))])
        return PendingEvent(
            id: id, stream: stream, type: type, schemaVersion: 1, actor: actor, device: device, recordedAt: time,
            payload: payload.encoded())
    }
}
