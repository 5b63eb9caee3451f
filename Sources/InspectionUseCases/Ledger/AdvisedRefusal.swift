import FoundationEssentials
import InspectionDomain
import LedgerCore

/// A refusal of the domain with the command that does what the person may
/// have meant: a re-inspection only while the follow-up is still open, else a
/// new inspection of the same template and place; the commands that answer
/// the required fields still empty.
public struct AdvisedRefusal: Error, CustomStringConvertible {
    public var refusal: DomainError
    /// The advice, a sentence naming a `jqc` command that works.
    public var next: String

    public var description: String { "\(refusal) \(next)" }

    /// `refusal` of a command on the inspection in `state`, advised when a
    /// command that works can be named; other refusals as they are.
    public static func advising(_ refusal: DomainError, _ state: InspectionState) -> any Error {
        let prefix = state.id.lowercased.prefix(8)
        switch refusal {
        case .inspectionNotEditable:
            if state.status == .completed && state.followUpOutstanding {
                return AdvisedRefusal(
                    refusal: refusal, next: "To record new findings, re-inspect it: 'jqc start --reinspect \(prefix)'.")
            }
            let area = state.areaID.map { " --area \($0)" } ?? ""
            let how = state.status == .discarded ? "To record it after all" : "To inspect again"
            return AdvisedRefusal(
                refusal: refusal,
                next: "\(how), start a new inspection: "
                    + "'jqc start --template \(state.templateID) --facility \(state.facilityID)\(area)'.")
        case .requiredFieldsEmpty:
            return AdvisedRefusal(
                refusal: refusal,
                next: "Answer them with 'jqc set \(prefix) FIELD=VALUE …', or field by field with 'jqc fill \(prefix)'."
            )
        default:
            return refusal
        }
    }
}
