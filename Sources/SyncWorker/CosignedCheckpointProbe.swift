import FoundationEssentials
import HTTPCore
import InspectionDomain
import LedgerCore

/// `jqc audit --witness` with C2SP witnesses: each witness asked now what it
/// last cosigned of this device, by the only question `tlog-witness` has.
/// The stored cosigned checkpoint (already device-signed) is submitted again
/// with `old` its own size and no proof, so nothing is signed and the
/// witness's state cannot move: a witness still at that checkpoint cosigns it
/// again (200); one that cosigned another size answers 409 with that size;
/// one holding another root at that size answers 409 with the same size.
public struct CosignedCheckpointProbe: Sendable {
    /// What one witness said.
    public enum Answer: Sendable, Equatable {
        /// It still holds the stored checkpoint (its new cosignature verified).
        case stillHolds(name: String, timestamp: UInt64)
        /// It cosigned `size` records since, as this log records a cosignature of it.
        case advancedAsRecorded(name: String, size: UInt64)
        /// It holds `size` records of this device that this log does not account for.
        case forked(name: String, size: UInt64, why: String)
        /// It could not be asked, or its answer is not believed.
        case notAsked(name: String, why: String)

        public var isAlarm: Bool {
            if case .forked = self { return true }
            return false
        }
    }

    public var witnesses: [WitnessTarget]

    public init(list: WitnessList) throws {
        witnesses = try list.witnesses.map { WitnessTarget(url: $0.url, key: try $0.cosignerKey()) }
    }

    /// Each witness's answer about `checkpoint` (its signed `note`), given
    /// the log's size and the sizes each witness is recorded cosigning.
    public func ask(
        checkpoint: Checkpoint, note: String, logSize: UInt64, recorded: [DeviceStreamEvent.CheckpointCosigned],
        transport: any HTTPTransport
    ) -> [Answer] {
        witnesses.map { witness in
            let name = witness.key.name
            let answer: HTTPResponse
            do {
                answer = try transport.send(witness.request(old: checkpoint.size, proof: [], note: note))
            } catch {
                return .notAsked(name: name, why: "it could not be reached (\(error))")
            }
            switch answer.status {
            case 200:
                let text = String(decoding: answer.body, as: UTF8.self)
                // A malformed answer and one without a good cosignature are the same answer: no cosignature.
                guard let found = try? Cosignature.verified(lines: text, body: checkpoint.text, key: witness.key),
                    let newest = found.max(by: { $0.timestamp < $1.timestamp })
                else { return .notAsked(name: name, why: "its answer holds no cosignature that verifies") }
                return .stillHolds(name: name, timestamp: newest.timestamp)
            case 409:
                guard let size = WitnessTarget.heldSize(answer) else {
                    return .notAsked(name: name, why: "its 409 names no size")
                }
                return Self.judge(name: name, held: size, stored: checkpoint.size, logSize: logSize, recorded: recorded)
            default:
                return .notAsked(name: name, why: WitnessTarget.text(answer))
            }
        }
    }

    /// A 409's size against the stored checkpoint and what the log records.
    static func judge(
        name: String, held: UInt64, stored: UInt64, logSize: UInt64, recorded: [DeviceStreamEvent.CheckpointCosigned]
    ) -> Answer {
        if held == stored {
            return .forked(
                name: name, size: held,
                why: "it holds another root at the stored checkpoint's size \(stored): another history of this device")
        }
        if held > logSize {
            return .forked(
                name: name, size: held,
                why: "it cosigned \(held) records of this device, more than this log's \(logSize): another copy "
                    + "recorded them")
        }
        if recorded.contains(where: { $0.witness == name && $0.size == held }) {
            return .advancedAsRecorded(name: name, size: held)
        }
        return .forked(
            name: name, size: held,
            why: "it cosigned \(held) records of this device, a size this log records no cosignature of (this log "
                + "has \(logSize)): another copy submitted it, or the record of it was lost")
    }

    /// The line `jqc audit --witness` prints for an answer.
    public static func line(_ answer: Answer, stored: UInt64) -> String {
        switch answer {
        case .stillHolds(let name, let timestamp):
            let time = Timestamp(microsecondsSinceEpoch: Int64(clamping: timestamp) &* 1_000_000).iso8601
            return "witness \(name), asked now: still holds the stored cosigned checkpoint of \(stored) records "
                + "(cosigned it again at \(time)): consistent"
        case .advancedAsRecorded(let name, let size):
            return "witness \(name), asked now: has cosigned \(size) records since, as this log records: consistent"
        case .forked(let name, _, let why):
            return "witness \(name), asked now: NOT consistent with the stored cosigned checkpoint of \(stored) "
                + "records: \(why) (a FORK of this device)"
        case .notAsked(let name, let why):
            return "witness \(name), asked now: no answer to believe: \(why)"
        }
    }
}
