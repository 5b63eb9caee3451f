import FoundationEssentials
import LedgerCore

// MARK: - Decide

extension InspectionState {
    /// The events that carry out `command`, or the reason it is refused.
    ///
    /// Pure: reads only the state and the command, and changes nothing; the
    /// caller appends the events (in order, in one transaction) and applies
    /// them. An empty list means there is nothing to record (setting a field
    /// to the value it has, clearing an empty field).
    public func decide(_ command: InspectionCommand) throws(DomainError) -> [InspectionEvent] {
        // A reception adds another device's records: taken in on a read-only
        // or handed-away copy too (`decideReceive`).
        if case .receive(let copy) = command { return try decideReceive(copy) }
        if let events = try decideSync(command) { return events }
        // A read-only copy of a plain handover bound to another device: only
        // that device records on it (one owner per plain handover).
        if let bound = readOnlyCopyOf { throw .readOnlyCopy(id, addressedTo: bound) }
        if case .handOver(let mode, let to, let toDevice) = command {
            return try decideHandOver(mode, to: to, toDevice: toDevice)
        }
        if let handedOver, handedOver.mode == .handover {
            throw .handedOver(id, to: handedOver.destination, at: handedOver.at)
        }
        switch command {
        case .start(let start): return try decideStart(start)
        case .setField(let reference, let input): return try decideSetField(reference, input)
        case .clearField(let reference): return try decideClearField(reference)
        case .capturePhoto(let photo, let target): return try decideCapturePhoto(photo, target)
        case .flagIssue(let issue): return try decideFlagIssue(issue)
        case .submit(let followUp): return try decideSubmit(followUpRequired: followUp)
        case .discard(let reason): return try decideDiscard(reason: reason)
        case .handOver(let mode, let to, let toDevice): return try decideHandOver(mode, to: to, toDevice: toDevice)
        case .receive(let copy): return try decideReceive(copy)
        case .settleSync, .retrySync, .dismissSync: return try decideSync(command) ?? []
        case .adoptSending: return try decideAdoptSending()
        }
    }

    // MARK: - Start

    func decideStart(_ start: StartInspection) throws(DomainError) -> [InspectionEvent] {
        guard status == .notStarted else { throw .inspectionAlreadyStarted(id) }
        let template = start.template
        // A re-inspection reuses the parent's pinned template, which must stay
        // usable even if today's rules for new templates are stricter.
        if start.parent == nil { try template.validate() }
        let facilityID = try RecordID.normalize(text: start.facilityID, what: "facility id")
        let areaID: String?
        if let raw = start.areaID {
            areaID = try RecordID.normalize(text: raw, what: "area id")
        } else {
            areaID = nil
        }
        guard !start.facilityName.trimmingWhiteSpace.isEmpty else {
            throw .invalidStart(reason: "facility \(facilityID) has no name. Pull reference data, then start again")
        }
        var prefilled: [FieldAnswer] = []
        if let parent = start.parent {
            guard parent.status == .completed else {
                throw .parentNotCompleted(parent: parent.id, status: parent.status)
            }
            guard parent.followUpOutstanding else { throw .parentNeedsNoFollowUp(parent: parent.id) }
            for field in template.fields where field.type.copiesToReinspection {
                if let value = parent.values[field.id], value.isKind(of: field.type) {
                    prefilled.append(FieldAnswer(field: field, value: value))
                }
            }
        } else if let server = start.serverParent {
            guard server.followUpRequired else { throw .serverParentNeedsNoFollowUp(serverID: server.serverID) }
            let copied = Set(template.fields.filter { $0.type.copiesToReinspection }.map(\.id))
            prefilled = server.answers.filter { copied.contains($0.fieldID) }
        }
        let hash = template.contentHash
        var events: [InspectionEvent] = []
        // Pin before the start that refers to the hash, unless the log has it.
        if !start.templateAlreadyPinned && templateHash != hash {
            events.append(.templatePinned(TemplatePinned(templateHash: hash, template: template)))
        }
        events.append(
            .started(
                InspectionStarted(
                    templateID: template.id, templateHash: hash, facilityID: facilityID,
                    facilityName: start.facilityName, areaID: areaID, areaName: start.areaName,
                    parentInspectionID: start.parent?.id, parentServerID: start.serverParent?.serverID,
                    prefilled: prefilled)))
        return events
    }

    // MARK: - Fields

    /// The pinned template of an inspection the inspector may still change.
    func editableTemplate() throws(DomainError) -> Template {
        guard status != .notStarted else { throw .inspectionNotStarted(id) }
        guard status == .draft else { throw .inspectionNotEditable(id, status: status) }
        guard let template else { throw .templateNotPinned(inspection: id, templateHash: templateHash) }
        return template
    }

    func decideSetField(_ reference: String, _ input: FieldInput) throws(DomainError) -> [InspectionEvent] {
        let field = try editableTemplate().field(matching: reference)
        guard !field.type.isDisplayOnly else { throw .displayOnlyField(field.fieldDescription) }
        let value: FieldValue
        switch input {
        case .text(let text): value = try FieldValue.parse(text, for: field)
        case .json(let json): value = try FieldValue(json: json, for: field)
        case .value(let given): value = try given.validated(for: field)
        }
        if case .photo(let reference) = value {
            // A photo field points at a capture of this inspection, never at
            // a file the log knows nothing about.
            guard let captured = photo(id: reference.photoID) else { throw .unknownPhoto(reference.photoID) }
            guard captured.photo == reference else {
                throw .invalidPhoto(reason: "photo \(reference.photoID.lowercased) was captured with other content")
            }
        }
        // A conflict is settled by a write, even one that repeats the value.
        if values[field.id] == value, !isInConflict(field.id) { return [] }
        return [.fieldSet(FieldAnswer(field: field, value: value))]
    }

    func decideClearField(_ reference: String) throws(DomainError) -> [InspectionEvent] {
        let field = try editableTemplate().field(matching: reference)
        guard !field.type.isDisplayOnly else { throw .displayOnlyField(field.fieldDescription) }
        guard values[field.id] != nil || isInConflict(field.id) else { return [] }
        return [.fieldCleared(FieldCleared(fieldID: field.id))]
    }

    // MARK: - Photos and issues

    func decideCapturePhoto(_ photo: PhotoReference, _ target: PhotoTarget) throws(DomainError) -> [InspectionEvent] {
        let template = try editableTemplate()
        try photo.validate()
        guard self.photo(id: photo.photoID) == nil else { throw .duplicateID(what: "photo", photo.photoID) }
        switch target {
        case .field(let reference):
            let field = try template.field(matching: reference)
            guard field.type.holdsPhoto else { throw .notAPhotoField(field.fieldDescription) }
            let kind: PhotoKind = field.type == .signature ? .signature : .photo
            return [
                .photoCaptured(PhotoCaptured(photo: photo, kind: kind, fieldID: field.id)),
                .fieldSet(FieldAnswer(field: field, value: .photo(photo))),
            ]
        case .issue(let issueID):
            guard issue(id: issueID) != nil else { throw .unknownIssue(issueID) }
            return [.photoCaptured(PhotoCaptured(photo: photo, kind: .photo, issueID: issueID))]
        case .inspection:
            return [.photoCaptured(PhotoCaptured(photo: photo, kind: .photo))]
        }
    }

    func decideFlagIssue(_ flag: FlagIssue) throws(DomainError) -> [InspectionEvent] {
        _ = try editableTemplate()
        let severity = try IssueSeverity(parsing: flag.severity)
        let description = flag.description.trimmingWhiteSpace
        guard !description.isEmpty else { throw .emptyIssueDescription }
        guard issue(id: flag.issueID) == nil else { throw .duplicateID(what: "issue", flag.issueID) }
        var events: [InspectionEvent] = []
        if let photo = flag.photo {
            try photo.validate()
            guard self.photo(id: photo.photoID) == nil else { throw .duplicateID(what: "photo", photo.photoID) }
            events.append(.photoCaptured(PhotoCaptured(photo: photo, kind: .photo, issueID: flag.issueID)))
        }
        events.append(
            .issueFlagged(
                IssueFlagged(
                    issueID: flag.issueID, severity: severity, description: description, photoID: flag.photo?.photoID)))
        return events
    }

    // MARK: - Submit and discard

    func decideSubmit(followUpRequired: Bool) throws(DomainError) -> [InspectionEvent] {
        let template = try editableTemplate()
        let missing = missingRequiredFields()
        guard missing.isEmpty else { throw .requiredFieldsEmpty(id, missing: missing.map(\.fieldDescription)) }
        let score = Score.compute(template: template, values: values)
        return [.submitted(InspectionSubmitted(score: score, followUpRequired: followUpRequired))]
    }

    func decideDiscard(reason: String?) throws(DomainError) -> [InspectionEvent] {
        guard status != .notStarted else { throw .inspectionNotStarted(id) }
        guard status == .draft else { throw .discardNotDraft(id, status: status) }
        let trimmed = reason?.trimmingWhiteSpace
        return [.discarded(InspectionDiscarded(reason: trimmed?.isEmpty == false ? trimmed : nil))]
    }
}

// MARK: - Handover

extension InspectionState {
    /// `inspection.handed_over`, or nothing when the inspection was handed
    /// over already (the file is written again from what was recorded).
    func decideHandOver(_ mode: HandoverMode, to: String?, toDevice: UUID?) throws(DomainError) -> [InspectionEvent] {
        if isHandedAway { return [] }
        guard status != .notStarted else { throw .inspectionNotStarted(id) }
        switch mode {
        case .handover:
            guard status == .draft else {
                throw .handoverRefused(id, reason: "it is \(status), and only a draft is handed over")
            }
            guard receivedFrom.isEmpty else {
                throw .handoverRefused(
                    id,
                    reason: "it was received from another device, and handing a received inspection on is not "
                        + "supported yet: finish it here, or share it (--share)")
            }
        case .share:
            // A submitted or discarded one is shared too: so the other
            // devices learn that it is closed, and why.
            break
        }
        // A device named is shown by its id. Only a plain handover is bound
        // by it (`readOnlyCopyOf`): every holder of a shared copy records.
        if let toDevice {
            return [.handedOver(InspectionHandedOver(mode: mode, to: toDevice.lowercased, toDevice: toDevice))]
        }
        let name = to?.trimmingWhiteSpace
        return [.handedOver(InspectionHandedOver(mode: mode, to: name?.isEmpty == false ? name : nil))]
    }
}
