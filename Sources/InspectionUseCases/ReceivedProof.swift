import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore

/// The other device's part of a received inspection, proven again as that
/// device's: each `inspection.received` keeps the sender's records with their
/// inclusion proofs, its signed checkpoint and its key, and is checked here as
/// `jqc receive` checked the file (photo files apart: the audit checks the
/// photo store). The reception record itself is proven through this log's tree.
public enum ReceivedProof {
    /// One line per reception in `timeline`, saying which device recorded
    /// what and what proves it.
    public static func notes(of timeline: AuditTimeline) -> [String] {
        timeline.entries.compactMap { entry -> String? in
            guard entry.carriedIn == nil, case .received(let received)? = entry.event else { return nil }
            let records = received.decodedRecords
            let span =
                records.isEmpty
                ? "no records"
                : "\(records.count) records (stream versions 1–\(records.count), positions "
                    + "\(records.first?.position ?? 0)–\(records.last?.position ?? 0) of its log)"
            let who = "device \(received.fromDevice.lowercased)"
            do throws(Reception.Refusal) {
                let size = try verify(received, inspection: timeline.inspectionID)
                return "the records of \(who): \(span), proven against its signed checkpoint of \(size) records "
                    + "(key \(received.publicKey.split(separator: "+").first ?? "")); carried by the reception at "
                    + "position \(entry.position), which this log's own proof covers"
            } catch {
                return "NOT VERIFIED: the records of \(who) carried at position \(entry.position): \(error.reason)"
            }
        }
    }

    /// Checks the carried part; the size of the sender's checkpoint.
    public static func verify(_ received: InspectionReceived, inspection: UUID) throws(Reception.Refusal) -> UInt64 {
        func entry(_ carried: CarriedRecord, _ path: String) -> HandoverFile.Entry {
            let decoded = try? EventRecord(decoding: carried.record)
            return HandoverFile.Entry(
                position: carried.position, streamVersion: decoded?.streamVersion ?? 0, type: decoded?.type ?? "",
                record: carried.record, inclusion: carried.inclusion, path: path)
        }
        let records = received.records.enumerated().map { entry($0.element, "records[\($0.offset)]") }
        var photos: [HandoverFile.Photo] = []
        for record in received.decodedRecords where record.type == InspectionEventType.photoCaptured.rawValue {
            if case .photoCaptured(let captured)? = try? InspectionEvent.decode(record) {
                photos.append(
                    HandoverFile.Photo(
                        photoID: captured.photo.photoID, sha256: captured.photo.sha256, position: record.position))
            }
        }
        let file = HandoverFile(
            mode: received.mode, to: nil, fromDevice: received.fromDevice, inspection: inspection,
            checkpoint: received.checkpoint, publicKey: received.publicKey,
            keyRecord: entry(received.keyRecord, "key_record"), records: records, photos: photos,
            templateRecord: entry(received.templateRecord, "template_record"), photoFiles: [])
        let verified = try HandoverVerification.verify(file, checkingPhotoFiles: false, checkingTo: false)
        return verified.checkpointSize
    }
}
