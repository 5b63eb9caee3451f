import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

import struct ArgumentParsing.CommandContext
import enum ArgumentParsing.UsageError
import enum HTTPCore.TransportError
import struct LMDB.LMDBError

@testable import InspectionDomain
@testable import InspectionStore
@testable import InspectionUseCases
@testable import JQCCommands
@testable import LedgerStore
@testable import SyncWorker

/// One error of each type the CLI can print (and every case that carries nothing), with its kind.
enum ErrorKindTable {
    static let id = UUID()

    /// Kind -> an error of that kind.
    static var samples: [String: () -> any Error] {
        [
            "UsageError.unknownCommand": {
                UsageError.unknownCommand(
                    "x", suggestion: nil, context: CommandContext(programName: "jqc", path: [], usage: "jqc"))
            },
            "LedgerVerificationFailure": { LedgerVerificationFailure(finding: "f") },
            "SalvageError.noStore": { SalvageError.noStore("p") },
            "SettingNotSet": { SettingNotSet(setting: .server) },
            "LedgerCopyError.unreadable": { LedgerCopyError.unreadable("p", "w") },
            "LedgerSettingError.unknownSetting": { LedgerSettingError.unknownSetting("s") },
            "RestorePointError": { RestorePointError(path: "p", code: 2) },
            "SyncRetry.Refusal.noSuchItem": { SyncRetry.Refusal.noSuchItem("i") },
            "SyncNowRequest.Failure.noAnswer": { SyncNowRequest.Failure.noAnswer(pid: 1, seconds: 2) },
            "SyncDismissal.Refusal.notAnID": { SyncDismissal.Refusal.notAnID("x") },
            "SyncDismissal.Refusal.noReason": { SyncDismissal.Refusal.noReason },
            "SyncServiceUnit.UnitRefusal": {
                SyncServiceUnit.UnitRefusal(what: "w", value: "v", why: "y", advice: "a")
            },
            "ServerReinspectionError.templateNotPulled": {
                ServerReinspectionError.templateNotPulled(record: "r", template: "t")
            },
            "SyncService.Refusal.restoredOverNewerHistory": { SyncService.Refusal.restoredOverNewerHistory("x") },
            "HandoverPathRefusal": { HandoverPathRefusal(path: "p", why: "w", advice: "a") },
            "Reception.Conflict.ownFile": { Reception.Conflict.ownFile(id) },
            "BundleUnreadable.notUTF8": { BundleUnreadable.notUTF8 },
            "BundleUnreadable.unknownMode": { BundleUnreadable.unknownMode },
            "BundleUnreadable.missingMember": { BundleUnreadable.missingMember(name: "n", place: "p") },
            "SenderTrust.Distrust.otherKey": { SenderTrust.Distrust.otherKey(device: id, fileKey: "k", pinned: []) },
            "Handover.Failure.photoMissing": { Handover.Failure.photoMissing(photo: id, sha256: "s") },
            "HandoverFile.Unreadable.unexpectedByte": { HandoverFile.Unreadable.unexpectedByte(offset: 0, byte: 0) },
            "Reception.Refusal.bundle": { Reception.Refusal.bundle(reason: "r", detail: nil) },
            "Reception.Refusal.lastRecordNotHandedOver": { Reception.Refusal.lastRecordNotHandedOver },
            "Reception.Refusal.modeOrToDiffers": { Reception.Refusal.modeOrToDiffers },
            "Reception.Refusal.templateRecordNotPinned": { Reception.Refusal.templateRecordNotPinned },
            "Reception.Refusal.templateHashDiffers": { Reception.Refusal.templateHashDiffers },
            "Reception.Refusal.noStart": { Reception.Refusal.noStart },
            "ProvingError.nothingToProveAgainst": { ProvingError.nothingToProveAgainst(path: "p") },
            "CheckpointError.unreadable": { CheckpointError.unreadable("x") },
            "AuditAssemblyError.nothingAsOf": { AuditAssemblyError.nothingAsOf(id, "t", first: nil) },
            "AuditWitnessError.notWitnessing": { AuditWitnessError.notWitnessing("w") },
            "AuditFailure": { AuditFailure(message: "m") },
            "ViewCheckError.differences": { ViewCheckError.differences("v", []) },
            "EditError.editorFailed": { EditError.editorFailed(command: "vi", status: 1) },
            "ReferenceChoice.Refusal.nothingPulled": { ReferenceChoice.Refusal.nothingPulled("x") },
            "SyncDaemonStatusError.notWritten": { SyncDaemonStatusError.notWritten(path: "p", why: "w") },
            "SessionStore.Failure.unreadable": { SessionStore.Failure.unreadable("p", why: "w") },
            "APIError.transport": { APIError.transport(.couldNotConnect(detail: "d")) },
            "WitnessListError.unreadable": { WitnessListError.unreadable("p") },
            "RetryPolicy.ScaleRefusal": { RetryPolicy.ScaleRefusal(text: "t") },
            "SyncLock.Failure.held": { SyncLock.Failure.held("p") },
            "TransportError.couldNotConnect": { TransportError.couldNotConnect(detail: "d") },
            "LookupError.notAnID": { LookupError.notAnID("x") },
            "LedgerDirectoryError.noLedger": { LedgerDirectoryError.noLedger("p") },
            "DeviceKeyError.unusable": { DeviceKeyError.unusable(path: "p", why: "w") },
            "ReferenceDataError.invalid": { ReferenceDataError.invalid("x") },
            "RecordingError.batchRefused": { RecordingError.batchRefused(inspection: id, refusals: [], accepted: 0) },
            "PhotoStore.Failure.unreadable": { PhotoStore.Failure.unreadable(path: "p", reason: "r") },
            "InspectionStoreError.undecodableEvent": {
                InspectionStoreError.undecodableEvent(position: 1, type: "t", "w")
            },
            "DomainError.invalidJSON": { DomainError.invalidJSON(reason: "r") },
            "DomainError.unknownField": { DomainError.unknownField(reference: "r", template: "t", candidates: []) },
            "DomainError.inspectionNotEditable": { DomainError.inspectionNotEditable(id, status: .completed) },
            "DomainError.emptyIssueDescription": { DomainError.emptyIssueDescription },
            "ValueRefusal": { ValueRefusal("r") },
            "CarriedRecordsError.missing": { CarriedRecordsError.missing(leaf: Digest256.zero, referencedBy: "r") },
            "ServerAccessError.noServer": { ServerAccessError.noServer },
            "ServerAccessError.notLoggedIn": { ServerAccessError.notLoggedIn },
            "ServerAccessError.otherServer": { ServerAccessError.otherServer(session: "a", configured: "b") },
            "FillError.noTerminal": { FillError.noTerminal("x") },
            "ReadingError.viewsNeedWriting": { ReadingError.viewsNeedWriting("x", .noViews) },
            "JQCError.noActor": { JQCError.noActor },
            "JQCError.bundleCheckNotJSON": { JQCError.bundleCheckNotJSON },
            "JQCError.nobodyLoggedIn": { JQCError.nobodyLoggedIn },
            "JQCError.outputNotWritten": { JQCError.outputNotWritten(ENOSPC) },
            "JQCError.emptyCredentials": { JQCError.emptyCredentials },
            "JQCError.loginRefused": { JQCError.loginRefused(serverSaid: "s") },
            "JQCError.responseLimitInvalid": { JQCError.responseLimitInvalid(value: "v") },
            "JQCError.restoreMarkStays": { JQCError.restoreMarkStays(found: "f") },
            "JQCError.itemsFailedForGood": { JQCError.itemsFailedForGood },
            "JQCError.backgroundPassFailed": { JQCError.backgroundPassFailed("f") },
            "JQCError.userManagerFailed": { JQCError.userManagerFailed(arguments: "a", output: "o") },
            "JQCError.noWitness": { JQCError.noWitness },
            "JQCError.quorumNotMet": { JQCError.quorumNotMet(cosigned: 1, quorum: 2) },
            "JQCError.noTerminalForUserName": { JQCError.noTerminalForUserName },
            "JQCError.noTerminalForPassword": { JQCError.noTerminalForPassword },
            "JQCError.emptyStandardInput": { JQCError.emptyStandardInput(what: "password") },
            "PhotoCapture.FieldHoldsOtherKind": {
                PhotoCapture.FieldHoldsOtherKind(
                    field: "f", holds: .signature, fieldDescription: "d", inspectionPrefix: "0a1b2c3d")
            },
            "JQCError.notFound": { JQCError.notFound(kind: "inspection", reference: "r", hint: "h") },
            "CommandExit": { CommandExit(status: 2, message: "m") },
            "NoteError.malformed": { NoteError.malformed("x") },
            "HeadMapError.badMath": { HeadMapError.badMath("x") },
            "SignatureError.invalidKey": { SignatureError.invalidKey("x") },
            "RecordError.malformed": { RecordError.malformed("x") },
            "CBORError.truncated": { CBORError.truncated(offset: 1) },
            "LMDBError": { LMDBError(code: -30_792, operation: "put") },
            "DurableFileError": { DurableFileError(path: "p", step: "s", code: 5) },
            "OpenFileError": { OpenFileError(name: "p", step: "reading", code: 5) },
            "ChildProcessError.cannotStart": { ChildProcessError.cannotStart("p", 2) },
            "OutputPathError": { OutputPathError(path: "p", resolved: "p", ledger: "l", what: "w") },
            "CopyDestinationError.notEmpty": { CopyDestinationError.notEmpty(path: "p", command: "c") },
            "LedgerError.noLedger": { LedgerError.noLedger(path: "p") },
            "LedgerError.corruptRecord": { LedgerError.corruptRecord(position: 1, .malformed("x")) },
            "ReadAccessError.permissionDenied": { ReadAccessError.permissionDenied(path: "p") },
            "ViewDamage": { ViewDamage(view: "v", table: "t", key: [], problem: "p") },
            "MerkleError.missingNode": { MerkleError.missingNode(level: 0, index: 0) },
            "HeadCheckError": { HeadCheckError(finding: .changed(position: 1)) },
            "TreeCheckError": { TreeCheckError(node: nil, reason: "r") },
        ]
    }

    /// Error types the CLI never prints as themselves: each is caught in its module and told as another,
    /// or carries another whose kind it has.
    static let toldAsAnother: [String: String] = [
        "AdvisedRefusal": "carries a DomainError and has its kind (anAdvisedRefusalIsTheKindOfItsRefusal)",
        "ForkFound": "SenderTrust's; Reception records the fork and throws SenderTrust.Distrust.fork",
        "Malformed": "BundleNote's; told as BundleCheck's NOT VERIFIED lines",
        "NotVerified": "BundleCheck's; its outcome is lines and an exit status (CommandExit)",
        "NotARecord": "BundleRecord's; told as BundleCheck's NOT VERIFIED lines",
        "IDRefusal": "FieldID's; told as DomainError.invalidID",
        "HeadMapCatchUpDamage": "LedgerStore's; told as LedgerError",
        "JournalError": "InFlightJournal's; told as the sync pass's outcome",
        "Stopped": "Projection's; a stop of the rebuild's workers, never thrown out of it",
        "ThreadStartFailure": "DetachedThread's; a rebuild then folds on one thread and says so",
        "NoViewsYet": "Invocation's; it opens the ledger for writing instead",
        "Problem": "StoreFile's (LMDB); told as LedgerError.damagedStore or LMDBError",
    ]
}

/// `JQC_ERRORS=json`'s kinds: stable, unique, one for every error the CLI can print.
@Suite struct ErrorKindTests {
    @Test(arguments: ErrorKindTable.samples.keys.sorted())
    func eachErrorHasItsKind(kind: String) throws {
        let make = try #require(ErrorKindTable.samples[kind])
        #expect(ErrorKind(of: make()).name == kind)
    }

    @Test func kindsAreUniqueAndNamedWithoutModulesOrPrivateContexts() {
        let names = ErrorKindTable.samples.values.map { ErrorKind(of: $0()).name }
        #expect(Set(names).count == names.count, "\(names.sorted())")
        for name in names {
            #expect(!name.contains("(") && !name.contains("$") && !name.hasPrefix("JQCCommands."), "\(name)")
        }
    }

    @Test func anAdvisedRefusalIsTheKindOfItsRefusal() {
        let advised = AdvisedRefusal(
            refusal: .inspectionNotEditable(ErrorKindTable.id, status: .completed), next: "start again")
        #expect(ErrorKind(of: advised).name == "DomainError.inspectionNotEditable")
    }

    /// A failure through the built `jqc`: arguments, whether the ledger exists, the kind, the status.
    static let failures: [([String], Bool, String, Int32)] = [
        (["bogus"], false, "UsageError.unknownCommand", 2),
        (["login", "hunter2"], true, "UsageError.unexpectedArgument", 2),
        (["show", "abc"], false, "LedgerDirectoryError.noLedger", 1),
        (["show", "abc"], true, "LookupError.noInspection", 1),
        (["start", "--template", "11", "--facility", "1"], true, "ReferenceChoice.Refusal.nothingPulled", 1),
        (["init"], true, "LedgerDirectoryError.ledgerExists", 1),
    ]

    /// `JQC_ERRORS=json` adds one line after what a person reads, which stays
    /// byte for byte what it was; without it there is no such line.
    @Test(arguments: failures)
    func theBuiltJQCAddsTheKindLineOnlyWhenAsked(
        arguments: [String], initialised: Bool, kind: String, status: Int32
    ) throws {
        let directory = TemporaryDirectory(prefix: "error-kind")
        let jqc = JQCRunner(ledger: directory.appending("ledger"))
        if initialised { try JQCRunner.succeeded(jqc("init")) }
        let plain = try jqc.run(arguments)
        let kinded = try jqc.reportingKinds.run(arguments)
        #expect(plain.status == status && kinded.status == status, "\(plain.stderr)")
        #expect(plain.errorKind == nil && !plain.stderr.contains("{\"error\""), "\(plain.stderr)")
        #expect(kinded.errorKind == kind, "\(kinded.stderr)")
        #expect(kinded.stderr.hasPrefix(plain.stderr), "\(kinded.stderr)")
        let added = kinded.stderr.dropFirst(plain.stderr.count)
        #expect(added.hasPrefix("{\"error\":") && added.hasSuffix("}\n") && !added.dropLast().contains("\n"))
        let said = try #require(plain.stderr.split(separator: "\n").first)
        #expect(kinded.errorMessage.map { "jqc: " + $0 } == String(said))
        #expect(!kinded.stderr.contains("hunter2"), "a word after login is never echoed, in neither line")
    }

    /// Every error type declared in the product's sources is in the table, or
    /// caught in its module; every case that carries nothing has its sample.
    @Test func everyDeclaredErrorTypeAndBareCaseHasAKind() throws {
        let declared = try ErrorDeclarations.scan(Products.repositoryFile("Sources"))
        let kinds = Set(ErrorKindTable.samples.keys)
        let typesWithKinds = Set(kinds.map { $0.split(separator: ".").map(String.init) }.flatMap { $0 })
        for type in declared.types where ErrorKindTable.toldAsAnother[type] == nil {
            #expect(typesWithKinds.contains(type) == true, "\(type) has no sample in ErrorKindTable")
        }
        for (type, bareCase) in declared.bareCases where ErrorKindTable.toldAsAnother[type] == nil {
            #expect(
                kinds.contains { $0.hasSuffix("\(type).\(bareCase)") }, "\(type).\(bareCase) has no sample")
        }
    }
}

/// The error types and their cases without payload, read from the sources.
struct ErrorDeclarations {
    var types: [String] = []
    var bareCases: [(String, String)] = []

    /// Modules whose errors never reach `jqc`'s output: test support and the benchmarks.
    static let outside = ["LedgerTestSupport", "ledger-bench"]

    static func scan(_ root: String) throws -> ErrorDeclarations {
        var found = ErrorDeclarations()
        let declaration = try Regex(#"^(\s*)(?:public |private |fileprivate )?(enum|struct) (\w+)[^{]*\bError\b"#)
        let files = try FileManager.default.subpathsOfDirectory(atPath: root)
        for file in files.sorted() where file.hasSuffix(".swift") && !outside.contains(where: file.hasPrefix) {
            let lines = try String(contentsOfFile: root + "/" + file, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                guard let match = try declaration.firstMatch(in: String(line)),
                    let indent = match.output[1].substring, let kind = match.output[2].substring,
                    let name = match.output[3].substring
                else { continue }
                found.types.append(String(name))
                guard kind == "enum" else { continue }
                for bare in bareCases(in: lines[(index + 1)...], indent: indent.count + 4) {
                    found.bareCases.append((String(name), bare))
                }
            }
        }
        return found
    }

    /// The names of `case a, b(Int)` lines at `indent` that carry nothing, up to the enum's end.
    static func bareCases(in lines: ArraySlice<Substring>, indent: Int) -> [String] {
        var names: [String] = []
        let closing = String(repeating: " ", count: indent - 4) + "}"
        for line in lines {
            if line.hasPrefix(closing) { break }
            let body = line.dropFirst(indent)
            guard line.prefix(indent).allSatisfy({ $0 == " " }), body.hasPrefix("case ") else { continue }
            var depth = 0
            var current = ""
            for character in body.dropFirst(5) + "," {
                switch character {
                case "(": depth += 1
                case ")": depth -= 1
                case "," where depth == 0:
                    let name = current.trimmingCharacters(in: .whitespaces)
                    if !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber }) { names.append(name) }
                    current = ""
                    continue
                default: break
                }
                current.append(depth > 0 ? "(" : character)
            }
        }
        return names
    }
}
