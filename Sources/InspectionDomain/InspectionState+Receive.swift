import FoundationEssentials
import LedgerCore

/// What `jqc receive` asks of an inspection once the file is verified and
/// believed (`Reception`, `SenderTrust`): its records taken in as one
/// `inspection.received`, with the template pinned first when this ledger
/// does not hold it.
public struct ReceiveCopy: Equatable, Sendable {
    /// The reception to record: the file's records by reference, with their bytes.
    public var received: InspectionReceived
    /// The template the file's inspection was started from, as the file's
    /// verified template record pins it.
    public var template: TemplatePinned
    /// True when the log holds a `template.pinned` of this template already.
    public var templateAlreadyPinned: Bool

    public init(received: InspectionReceived, template: TemplatePinned, templateAlreadyPinned: Bool) {
        self.received = received
        self.template = template
        self.templateAlreadyPinned = templateAlreadyPinned
    }
}

/// One carried record that breaks a rule of the inspection's pinned template.
public struct CarriedRuleBreak: Hashable, Sendable, CustomStringConvertible {
    /// The event id of the carried record.
    public var record: UUID
    /// The device that recorded it, and where in that device's log.
    public var device: UUID
    public var position: UInt64
    /// The field it writes, when it names one the template has.
    public var field: FieldDescription?
    /// The rule it breaks, in the domain's words.
    public var rule: String

    public var description: String {
        "record \(record.lowercased) of device \(device.lowercased) (its log's position \(position))"
            + (field.map { ", on \($0)," } ?? "") + " breaks the template's rules: \(rule)"
    }
}

extension InspectionState {
    /// A reception is taken in on any copy, even a read-only one or one
    /// handed away: it adds another device's records, it records nothing of
    /// this device's own. Every carried record is held first to the rules
    /// the pinned template sets for what a device records on the form, as
    /// `decide` holds this device's own commands to them: a file whose
    /// records this device would have refused to record is refused whole
    /// (`docs/domain.md` § Sharing and merging).
    func decideReceive(_ copy: ReceiveCopy) throws(DomainError) -> [InspectionEvent] {
        if let broken = copy.received.firstRuleBreak(of: copy.template.template) {
            throw .carriedRecordRefused(inspection: id, broken)
        }
        return (copy.templateAlreadyPinned ? [] : [.templatePinned(copy.template)]) + [.received(copy.received)]
    }
}

extension InspectionReceived {
    /// The first carried record, at any depth, that breaks a rule of
    /// `template`: an answer that does not fit its field (a rating outside
    /// its scale, an option not offered, a value of another kind), an answer
    /// or clearing of a field the template lacks or that holds no value, or
    /// a photo aimed at a field that holds no photos; nil when every record
    /// keeps them. A record that cannot be read, or a walk past the limits,
    /// is a break too (the reception was checked against the limits first).
    public func firstRuleBreak(of template: Template) -> CarriedRuleBreak? {
        var found: CarriedRuleBreak?
        do {
            try walk { walked in
                found = Self.ruleBreak(walked.record, template: template)
                return found == nil ? true : nil
            }
        } catch {
            return CarriedRuleBreak(
                record: fromDevice, device: fromDevice, position: 0, field: nil,
                rule: "its records cannot be read: \(error)")
        }
        return found
    }

    /// The rule `record` breaks, if any (records of other types than an
    /// answer, a clearing or a photo keep the form's rules by their kind).
    static func ruleBreak(_ record: EventRecord, template: Template) -> CarriedRuleBreak? {
        let types: Set<String> = [
            InspectionEventType.fieldSet.rawValue, InspectionEventType.fieldCleared.rawValue,
            InspectionEventType.photoCaptured.rawValue,
        ]
        guard types.contains(record.type) else { return nil }
        func broken(_ field: FieldDescription?, _ rule: String) -> CarriedRuleBreak {
            CarriedRuleBreak(
                record: record.id, device: record.device, position: record.position, field: field, rule: rule)
        }
        let event: InspectionEvent
        do {
            event = try EventUpcaster.decode(record, template: template)
        } catch {
            return broken(nil, "\(error)")
        }
        let fieldID: FieldID?
        switch event {
        case .fieldSet(let answer): fieldID = answer.fieldID
        case .fieldCleared(let cleared): fieldID = cleared.fieldID
        case .photoCaptured(let captured): fieldID = captured.fieldID
        default: return nil
        }
        guard let fieldID else { return nil }
        guard let field = template.field(id: fieldID) else {
            return broken(nil, "field \(fieldID) is not in template \(template)")
        }
        do {
            switch event {
            case .fieldSet(let answer):
                guard answer.fieldType == field.type else {
                    return broken(
                        field.fieldDescription, "it records a \(answer.fieldType) answer for a \(field.type) field")
                }
                _ = try answer.value.validated(for: field)
            case .fieldCleared:
                guard !field.type.isDisplayOnly else { throw DomainError.displayOnlyField(field.fieldDescription) }
            default:
                guard field.type.holdsPhoto else { throw DomainError.notAPhotoField(field.fieldDescription) }
            }
        } catch {
            return broken(field.fieldDescription, "\(error)")
        }
        return nil
    }
}
