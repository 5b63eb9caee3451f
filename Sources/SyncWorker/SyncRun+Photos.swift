import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore

// MARK: - Photos

extension SyncRun {
    /// A photo is uploaded unless its record already went out without it,
    /// or its file is missing or changed: those fail for good at once.
    func beginPhoto(_ item: WaveItem, _ state: InspectionState, _ book: inout SyncBook) throws -> SendStep {
        let row = item.row
        guard let photo = state.photo(id: row.item.id) else { return .finished(progressed: false) }
        let owner = state.owner(ofPhoto: photo)
        if case .synced = state.sync.status(of: owner) {
            // Nothing on the server would point to the file: its record went out without it.
            let record = Self.ownerName(owner)
            let error =
                "The \(record) already went to the server without this photo, so it was not uploaded: nothing "
                + "there would point to it. The photo stays in this ledger (photos/\(photo.photo.sha256.hex); "
                + "'jqc audit \(state.id.lowercased.prefix(8))' shows it). To put it on the server, record it in a new "
                + "inspection ('jqc start', then 'jqc photo'), or give the file to the server's administrator."
            try giveUp(item, error: error, httpStatus: nil, state, &book)
            return .finished(progressed: true)
        }
        let hash = photo.photo.sha256.hex
        guard let data = ledger.photos.contents(sha256: hash) else {
            let error =
                "The photo's file photos/\(hash) is missing from the ledger's photo store, so it cannot be "
                + "uploaded, and its \(Self.ownerName(owner)) goes to the server without it. Restore the file "
                + "from a backup to keep it in this ledger."
            try giveUp(item, error: error, httpStatus: nil, state, &book)
            return .finished(progressed: true)
        }
        let bytes = [UInt8](data)
        let actual = SHA256Hasher().digest(bytes).hex
        guard actual == hash else {
            let error =
                "The photo's file photos/\(hash) no longer matches the hash recorded when it was captured (it "
                + "hashes to \(actual.prefix(12))…), so it was not uploaded, and its \(Self.ownerName(owner)) goes "
                + "to the server without it. Restore the original file from a backup to keep it in this ledger."
            try giveUp(item, error: error, httpStatus: nil, state, &book)
            return .finished(progressed: true)
        }
        let upload = SyncRequests.upload(photo, bytes: bytes)
        let key = try idempotencyKey(for: row, &book)
        tell(item, .sending, &book)
        return .request(.uploadPhoto(upload, key: key))
    }

    func settlePhoto(_ answer: SyncAnswer, _ item: WaveItem, _ state: InspectionState, _ book: inout SyncBook)
        throws -> SendStep
    {
        switch answer {
        case .uploaded(let path):
            guard let photo = state.photo(id: item.row.item.id) else { return .finished(progressed: false) }
            try record([.photoUploaded(PhotoUploaded(photoID: photo.photo.photoID, serverPath: path))], item, &book)
            tell(item, .sent("uploaded"), &book)
            return .finished(progressed: true)
        case .failed(let error):
            return .finished(progressed: try failed(item, error, state, &book))
        case .found, .created:
            preconditionFailure("an upload is answered with a path")
        }
    }
}
