import FoundationEssentials
import LedgerCore

// `inspection.send_adopted`: this device becomes the sender of a submission
// recorded on another device (`jqc sync adopt ID`), for when its submitter
// cannot send it (wiped, lost). Its keys are its `Key` enum, which its CBOR,
// its JSON and its decoder share.

/// `inspection.send_adopted`: the device that records it becomes the sender
/// of the submission `submitEvent` recorded on `submittedOnDevice`: that
/// submission joins this device's outbox and `jqc sync` sends it, looked up
/// on the server first (the submitter may have sent it after all).
public struct InspectionSendAdopted: Hashable, Sendable {
    /// The device whose submit this device sends.
    public var submittedOnDevice: UUID
    /// The id of that device's `inspection.submitted` record.
    public var submitEvent: UUID

    public init(submittedOnDevice: UUID, submitEvent: UUID) {
        self.submittedOnDevice = submittedOnDevice
        self.submitEvent = submitEvent
    }
}

extension InspectionSendAdopted {
    enum Key: String, PayloadKey {
        case submittedOnDevice = "submitted_on_device", submitEvent = "submit_event"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map([
            (.submittedOnDevice, .text(submittedOnDevice.lowercased)), (.submitEvent, .text(submitEvent.lowercased)),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.submittedOnDevice, .string(submittedOnDevice.lowercased)),
            (.submitEvent, .string(submitEvent.lowercased)),
        ])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionSendAdopted {
        var device: UUID?
        var submit: UUID?
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .submittedOnDevice?: device = try r.uuid(Key.submittedOnDevice)
            case .submitEvent?: submit = try r.uuid(Key.submitEvent)
            case nil: try r.skip()
            }
        }
        return InspectionSendAdopted(
            submittedOnDevice: try r.required(device, Key.submittedOnDevice),
            submitEvent: try r.required(submit, Key.submitEvent))
    }
}

/// A device's `inspection.send_adopted` as folded: who adopted which
/// submission, when, and where the record stands in the merge.
public struct SendAdoption: Hashable, Sendable {
    /// The adopting device is `stamp.device`.
    public var stamp: EventStamp
    public var at: Timestamp
    public var by: Actor
    public var submittedOnDevice: UUID
    public var submitEvent: UUID

    /// The device that adopted the submission (recorded the event).
    public var device: UUID { stamp.device }
}

/// Why `jqc sync adopt` is refused (`DomainError.adoptionRefused`).
public enum AdoptionRefusal: Hashable, Sendable {
    /// A draft or a discarded inspection: nothing of it is sent.
    case notSubmitted(InspectionStatus)
    /// The submit that stands is this device's: it sends it already.
    case submittedHere
    /// A device reported it sent (the server id it was given; `by` nil:
    /// this device).
    case alreadySent(serverID: String, by: UUID?)
    /// This device adopted it already.
    case adoptedHere(at: Timestamp)
    /// Another device adopted it, and this device received that adoption.
    case adoptedElsewhere(device: UUID, at: Timestamp)

    func reason(_ id: UUID) -> String {
        let short = id.lowercased.prefix(8)
        return switch self {
        case .notSubmitted(let status):
            "it is \(status), not submitted: only a submitted inspection is sent. Nothing was recorded; submit it "
                + "('jqc submit \(short)'), or receive the copy its submitter shared"
        case .submittedHere:
            "it was submitted on this device, which sends it already. Nothing was recorded; 'jqc outbox' lists it "
                + "and 'jqc sync' sends it"
        case .alreadySent(let serverID, let device):
            "\(device.map { "device \($0.lowercased)" } ?? "this device") reported it sent (server id \(serverID)): "
                + "there is nothing left to send. Nothing was recorded"
        case .adoptedHere(let at):
            "this device adopted it already, at \(at.iso8601). Nothing was recorded; 'jqc outbox' lists it and "
                + "'jqc sync' sends it"
        case .adoptedElsewhere(let device, let at):
            "only one device sends; device \(device.lowercased) adopted it at \(at.iso8601). Nothing was recorded; "
                + "that device sends it (a share from it says when it did)"
        }
    }
}
