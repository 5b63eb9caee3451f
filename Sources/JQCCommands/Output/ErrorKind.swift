import FoundationEssentials
import InspectionDomain
import InspectionUseCases

/// The stable name of a failure `jqc` prints, `<Type>.<case>` (`DomainError.unknownField`,
/// `Reception.Refusal.noStart`, `LedgerError.rolledBack`), or `<Type>` for an error that is a
/// struct (`RestorePointError`): what `JQC_ERRORS=json` adds to standard error, so a script
/// matches a failure by what it is instead of by its wording, which may change.
///
/// The type is the error's own (its module left out, the types it is nested in kept); the case
/// is the enum case. `Mirror` names a case only by its payload's label, so an enum with cases
/// that carry nothing names every case itself (``ErrorCaseNaming``). A renamed type or case is
/// a changed kind: `Schemas/cli-json.md` says so.
public struct ErrorKind: Hashable, Sendable, CustomStringConvertible {
    /// `Type.case` or `Type`.
    public let name: String

    public var description: String { name }

    /// A kind that is no typed error's.
    init(name: String) { self.name = name }

    /// A group word given without the subcommand it needs (the parser's own
    /// missing subcommand is `UsageError.missingSubcommand`).
    static let needsSubcommand = ErrorKind(name: "Usage.needsSubcommand")
    /// SIGINT or SIGTERM stopped the command; nothing half-done was recorded.
    static let stopped = ErrorKind(name: "Stop.bySignal")

    /// The kind of `error`, from its dynamic type and, for an enum, its case.
    public init(of error: any Error) {
        if let wrapping = error as? any ErrorWrapping {
            self.init(of: wrapping.wrapped)
            return
        }
        let type = Self.typeName(type(of: error))
        self.init(name: Self.caseName(of: error).map { "\(type).\($0)" } ?? type)
    }

    /// `Module.Outer.Inner` without the module, and without the anonymous
    /// context a private type reports (`(unknown context at $…)`).
    static func typeName(_ type: any Any.Type) -> String {
        let parts = String(reflecting: type).split(separator: ".", omittingEmptySubsequences: false)
        let named = parts.dropFirst().filter { !$0.hasPrefix("(") && !$0.hasSuffix(")") && !$0.isEmpty }
        return named.isEmpty ? String(describing: type) : named.joined(separator: ".")
    }

    static func caseName(of error: any Error) -> String? {
        if let named = error as? any ErrorCaseNaming { return named.caseName }
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .enum else { return nil }
        return mirror.children.first?.label
    }
}

/// An error that carries another with advice of its own: its kind is the
/// carried one's (an ``AdvisedRefusal`` of `DomainError.inspectionNotEditable`
/// is that refusal, told with the next step to take).
protocol ErrorWrapping: Error {
    var wrapped: any Error { get }
}

extension AdvisedRefusal: ErrorWrapping {
    var wrapped: any Error { refusal }
}

/// An error enum with a case that carries nothing, which `Mirror` cannot
/// name: it names each of its cases in a switch without a default, so a new
/// case does not compile until it has a kind.
protocol ErrorCaseNaming: Error {
    var caseName: String { get }
}

extension Reception.Refusal: ErrorCaseNaming {
    var caseName: String {
        switch self {
        case .bundle: "bundle"
        case .keyOfAnotherDevice: "keyOfAnotherDevice"
        case .recordOfAnotherDevice: "recordOfAnotherDevice"
        case .recordUnreadable: "recordUnreadable"
        case .recordNotDeterministic: "recordNotDeterministic"
        case .photoFileCount: "photoFileCount"
        case .photoFileNotItsPhoto: "photoFileNotItsPhoto"
        case .carriedPhotoFileUnnamed: "carriedPhotoFileUnnamed"
        case .carriedPhotoFileMissing: "carriedPhotoFileMissing"
        case .photoFileRefused: "photoFileRefused"
        case .photoFileUncheckable: "photoFileUncheckable"
        case .lastRecordNotHandedOver: "lastRecordNotHandedOver"
        case .modeOrToDiffers: "modeOrToDiffers"
        case .toDeviceDiffers: "toDeviceDiffers"
        case .templateRecordNotPinned: "templateRecordNotPinned"
        case .templateHashDiffers: "templateHashDiffers"
        case .noStart: "noStart"
        case .templateNotStarted: "templateNotStarted"
        case .eventUnreadable: "eventUnreadable"
        case .carriedReceptionUnreadable: "carriedReceptionUnreadable"
        case .carriedRecords: "carriedRecords"
        case .continuationNotHeld: "continuationNotHeld"
        case .continuationNotThatRecord: "continuationNotThatRecord"
        case .continuationNotTheRecorders: "continuationNotTheRecorders"
        }
    }
}

extension DomainError: ErrorCaseNaming {
    var caseName: String {
        switch self {
        case .invalidJSON: "invalidJSON"
        case .invalidID: "invalidID"
        case .invalidTemplate: "invalidTemplate"
        case .unknownFieldType: "unknownFieldType"
        case .invalidTemplateField: "invalidTemplateField"
        case .unknownField: "unknownField"
        case .ambiguousField: "ambiguousField"
        case .valueRefused: "valueRefused"
        case .displayOnlyField: "displayOnlyField"
        case .photoFieldNeedsCapture: "photoFieldNeedsCapture"
        case .notAPhotoField: "notAPhotoField"
        case .invalidPhoto: "invalidPhoto"
        case .inspectionNotStarted: "inspectionNotStarted"
        case .inspectionAlreadyStarted: "inspectionAlreadyStarted"
        case .inspectionNotEditable: "inspectionNotEditable"
        case .requiredFieldsEmpty: "requiredFieldsEmpty"
        case .discardNotDraft: "discardNotDraft"
        case .handedOver: "handedOver"
        case .handoverRefused: "handoverRefused"
        case .readOnlyCopy: "readOnlyCopy"
        case .carriedRecordRefused: "carriedRecordRefused"
        case .syncItemRefused: "syncItemRefused"
        case .deviceStreamRefused: "deviceStreamRefused"
        case .adoptionRefused: "adoptionRefused"
        case .parentNotCompleted: "parentNotCompleted"
        case .parentNeedsNoFollowUp: "parentNeedsNoFollowUp"
        case .serverParentNeedsNoFollowUp: "serverParentNeedsNoFollowUp"
        case .templateNotPinned: "templateNotPinned"
        case .invalidStart: "invalidStart"
        case .unknownSeverity: "unknownSeverity"
        case .emptyIssueDescription: "emptyIssueDescription"
        case .unknownIssue: "unknownIssue"
        case .unknownPhoto: "unknownPhoto"
        case .duplicateID: "duplicateID"
        case .malformedPayload: "malformedPayload"
        case .unsupportedSchemaVersion: "unsupportedSchemaVersion"
        case .upcastFailed: "upcastFailed"
        case .upcastRequired: "upcastRequired"
        }
    }
}

extension SyncDismissal.Refusal: ErrorCaseNaming {
    var caseName: String {
        switch self {
        case .notAnID: "notAnID"
        case .noSuchItem: "noSuchItem"
        case .ambiguous: "ambiguous"
        case .notFailedForGood: "notFailedForGood"
        case .noReason: "noReason"
        }
    }
}

extension ServerAccessError: ErrorCaseNaming {
    var caseName: String {
        switch self {
        case .noServer: "noServer"
        case .notLoggedIn: "notLoggedIn"
        case .otherServer: "otherServer"
        case .offline: "offline"
        case .failed: "failed"
        }
    }
}

extension JQCError: ErrorCaseNaming {
    var caseName: String {
        switch self {
        case .unreadableFile: "unreadableFile"
        case .io: "io"
        case .verificationFailed: "verificationFailed"
        case .noActor: "noActor"
        case .notFound: "notFound"
        case .ambiguous: "ambiguous"
        case .bundleCheckNotJSON: "bundleCheckNotJSON"
        case .nobodyLoggedIn: "nobodyLoggedIn"
        case .outputNotWritten: "outputNotWritten"
        case .emptyCredentials: "emptyCredentials"
        case .loginRefused: "loginRefused"
        case .responseLimitInvalid: "responseLimitInvalid"
        case .restoreMarkStays: "restoreMarkStays"
        case .itemsFailedForGood: "itemsFailedForGood"
        case .backgroundPassFailed: "backgroundPassFailed"
        case .userManagerFailed: "userManagerFailed"
        case .noWitness: "noWitness"
        case .quorumNotMet: "quorumNotMet"
        case .noTerminalForUserName: "noTerminalForUserName"
        case .noTerminalForPassword: "noTerminalForPassword"
        case .emptyStandardInput: "emptyStandardInput"
        }
    }
}

extension BundleUnreadable: ErrorCaseNaming {
    var caseName: String {
        switch self {
        case .notUTF8: "notUTF8"
        case .tooDeep: "tooDeep"
        case .notJSON: "notJSON"
        case .repeatedMember: "repeatedMember"
        case .memberDiffersInCase: "memberDiffersInCase"
        case .unknownMember: "unknownMember"
        case .missingMember: "missingMember"
        case .documentNotAnObject: "documentNotAnObject"
        case .wrongType: "wrongType"
        case .unknownFormat: "unknownFormat"
        case .unknownMode: "unknownMode"
        case .notLowerCaseUUID: "notLowerCaseUUID"
        case .notLowerCaseSHA256: "notLowerCaseSHA256"
        case .notStandardBase64: "notStandardBase64"
        case .notAHash: "notAHash"
        case .repeatedEntry: "repeatedEntry"
        case .outOfOrder: "outOfOrder"
        case .wrongHash: "wrongHash"
        case .referencesUnreadable: "referencesUnreadable"
        case .referencesInFirstFormat: "referencesInFirstFormat"
        case .carriedRecordsIncomplete: "carriedRecordsIncomplete"
        case .unreferencedLeaf: "unreferencedLeaf"
        }
    }
}
