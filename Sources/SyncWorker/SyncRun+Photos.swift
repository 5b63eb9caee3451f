import FoundationEssentials
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
        if let lookUp = try lookUpFirst(state, &book) {
            tell(item, .lookingUp, &book)
            return lookUp
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
        case .found, .foundRecord, .created:
            preconditionFailure("an upload is answered with a path")
        }
    }

    /// The look-up of the photo's inspection, when another device may have
    /// sent it (an adopted submission whose submitter sent after all, or a
    /// shared one another device adopted) and this run has not looked yet:
    /// its photos must not go to the server twice. Nil: upload as usual.
    /// While the look-up is in flight on another worker, the photo waits.
    private func lookUpFirst(_ state: InspectionState, _ book: inout SyncBook) throws
        -> SendStep?
    {
        guard state.mayBeSentElsewhere else { return nil }
        switch state.sync.status(of: SyncItem(kind: .inspection, id: state.id)) {
        case .pending, .retrying: return try lookUpFirstOnce(state, &book)
        case .synced, .failed: return nil
        }
    }

    /// The look-up's request, once per run and inspection (see `lookUpFirst`).
    private func lookUpFirstOnce(_ state: InspectionState, _ book: inout SyncBook) throws -> SendStep? {
        switch book.lookedUpBeforePhotos[state.id] {
        case true?: return nil
        case false?: return .finished(progressed: false)
        case nil:
            book.lookedUpBeforePhotos[state.id] = false
            var parentServerID = state.parentServerID
            if let parentID = state.parentInspectionID, parentServerID == nil {
                parentServerID = try self.state(of: parentID, &book)?.sync.serverID
            }
            let body = SyncRequests.inspection(
                state, photoPath: { state.sync.uploadedPhotos[$0] }, parentServerID: parentServerID)
            return .request(.lookUpBeforePhotos(body: body))
        }
    }

    /// Settles the look-up before the photos. Found: the inspection is
    /// recorded as accepted under that id (as the look-up before sending
    /// does), and each of its photos whose field the record holds as an
    /// uploaded path is recorded as uploaded there, not uploaded again.
    /// Issue photos are not: no endpoint lists issues, so an issue is sent
    /// again (and said to be possibly twice) with its photo.
    func settleLookUpBeforePhotos(
        _ answer: SyncAnswer, _ item: WaveItem, _ state: InspectionState, _ book: inout SyncBook
    ) throws -> SendStep {
        switch answer {
        case .foundRecord(let record?):
            book.lookedUpBeforePhotos[state.id] = true
            guard let serverID = APIClient.recordID(record["id"]) else { return .finished(progressed: false) }
            let inspection = SyncItem(kind: .inspection, id: state.id)
            let ownDoubt = mayHaveSentItself(inspection, state)
            try recordFoundElsewhere(
                inspection, [.inspectionAccepted(InspectionAccepted(serverID: serverID))], item, &book)
            noteSentElsewhere(inspection, state, ownDoubt: ownDoubt, &book)
            let form = record["form_data"]
            for photo in state.photos where photo.issueID == nil {
                guard state.sync.uploadedPhotos[photo.photo.photoID] == nil, let field = photo.fieldID,
                    let path = form?[field.rawValue]?.stringValue, !path.isEmpty
                else { continue }
                let found = SyncItem(kind: .photo, id: photo.photo.photoID)
                try recordFoundElsewhere(
                    found, [.photoUploaded(PhotoUploaded(photoID: photo.photo.photoID, serverPath: path))], item, &book)
                noteSentElsewhere(found, state, ownDoubt: ownDoubt, &book)
            }
            // Its issues go out as after the look-up before sending: each sent, never lost, flagged.
            for issue in state.issues where state.sync.acceptedIssues[issue.id] == nil {
                willSend(SyncItem(kind: .issue, id: issue.id), &book)
            }
            tell(item, .sent("already on the server with inspection id \(serverID) (another device sent it)"), &book)
            return .finished(progressed: true)
        case .foundRecord(nil):
            book.lookedUpBeforePhotos[state.id] = true
            book.foundNoneBeforePhotos.insert(state.id)
            return try beginPhoto(item, try self.state(of: state.id, &book) ?? state, &book)
        case .failed(let error):
            book.lookedUpBeforePhotos[state.id] = nil
            return .finished(progressed: try failed(item, error, state, &book))
        case .uploaded, .found, .created:
            preconditionFailure("a look-up before the photos is answered with a record or none")
        }
    }

    /// Records an outcome of `found`, another item of the photo's inspection, as found on the server.
    private func recordFoundElsewhere(
        _ found: SyncItem, _ events: [InspectionEvent], _ item: WaveItem, _ book: inout SyncBook
    ) throws {
        var row = item.row
        row.item = found
        try record(events, WaveItem(row: row, position: item.position), &book)
        book.adopted.append(found)
    }
}
