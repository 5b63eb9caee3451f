import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The ledger directory as one type: `LedgerDirectory.create` and
/// `LedgerBackup.make` without `jqc`, and the format page's directory table
/// naming exactly the files `LedgerLayout` names.
@Suite struct LedgerLayoutTests {
    static let clock = ManualClock()

    @Test func createMakesAWholeLedgerAndRefusesToMakeItTwice() throws {
        let temporary = TemporaryDirectory(prefix: "layout-create")
        let home = LedgerDirectory(path: temporary.appending("ledger"))
        try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
        // A head file a removed ledger left behind is not the new store's.
        try Data("stale\n".utf8).write(to: URL(fileURLWithPath: home.storeHeadPath))
        let config = try home.create(
            serverURL: "https://jqc.example/api/v1", caBundle: nil, witnessURL: nil, at: Self.clock.now())
        #expect(try LedgerConfig.load(home) == config)
        #expect(config.serverURL == "https://jqc.example/api/v1")
        for made in [home.storeDataPath, home.photosPath, home.deviceKeyPath] {
            #expect(FileManager.default.fileExists(atPath: made), "\(made)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.storeHeadPath))
        #expect(throws: LedgerDirectoryError.ledgerExists(home.path)) {
            _ = try home.create(serverURL: nil, caBundle: nil, witnessURL: nil, at: Self.clock.now())
        }
        unlink(home.configPath)
        #expect(throws: LedgerDirectoryError.storeWithoutConfig(store: home.storePath, config: home.configPath)) {
            _ = try home.create(serverURL: nil, caBundle: nil, witnessURL: nil, at: Self.clock.now())
        }
        #expect(!FileManager.default.fileExists(atPath: home.configPath))
    }

    @Test func aFailedCreateLeavesNoHalfMadeLedger() throws {
        let temporary = TemporaryDirectory(prefix: "layout-create-failed")
        let home = LedgerDirectory(path: temporary.appending("ledger"))
        try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
        // Something at `device.key`: the last step fails, after the store and config.json were written.
        try FileManager.default.createDirectory(atPath: home.deviceKeyPath, withIntermediateDirectories: true)
        #expect(throws: DeviceKeyError.exists(path: home.deviceKeyPath)) {
            _ = try home.create(serverURL: nil, caBundle: nil, witnessURL: nil, at: Self.clock.now())
        }
        #expect(!home.exists)
        #expect(!FileManager.default.fileExists(atPath: home.storePath))
        #expect(!FileManager.default.fileExists(atPath: home.photosPath))
    }

    @Test func aBackupIsAVerifiedRestorePointOfTheLedger() throws {
        let temporary = TemporaryDirectory(prefix: "layout-backup")
        let home = LedgerDirectory(path: temporary.appending("ledger"))
        let config = try home.create(serverURL: nil, caBundle: nil, witnessURL: nil, at: Self.clock.now())
        let head: LedgerDigest
        do {
            let ledger = try InspectionLedger(
                storePath: home.storePath, photosPath: home.photosPath, access: .recording)
            defer { ledger.close() }
            let json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
            try ledger.reference.replace(with: try ReferenceCache.Snapshot(json: json), at: Self.clock.now())
            let template = try #require(try ledger.reference.template(id: "11"))
            let start = StartInspection(
                template: template, templateAlreadyPinned: false, facilityID: "101",
                facilityName: "Riverside Medical Center")
            _ = try ledger.record(
                [.start(start)], on: UUID(), by: Actor(id: "local:ana", name: "ana", verified: false),
                device: config.deviceID, clock: Self.clock)
            head = try ledger.log.head()
        }
        let target = LedgerDirectory(path: temporary.appending("backup"))
        let backup = try LedgerBackup.make(from: home, to: target, at: Self.clock.now())
        #expect(backup.summary.head == head && backup.summary.events == head.position && head.position > 0)
        #expect(backup.keyCopied && backup.keyNotCopied == nil)
        #expect(StoreHead.read(target.storeHeadPath) == StoreHead(head))
        let mark = try #require(RestorePoint.load(target))
        #expect(mark.device == config.deviceID.lowercased && mark.records == head.position)
        #expect(try LedgerConfig.load(target) == config)
        #expect(!FileManager.default.fileExists(atPath: target.credentialsPath))
        // Into a directory that is not empty: refused, and the directory's own file is left alone.
        let occupied = LedgerDirectory(path: temporary.appending("occupied"))
        try FileManager.default.createDirectory(atPath: occupied.path, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: occupied.path + "/note"))
        #expect(throws: CopyDestinationError.notEmpty(path: occupied.path, command: "backup")) {
            _ = try LedgerBackup.make(from: home, to: occupied, at: Self.clock.now())
        }
        #expect(FileManager.default.fileExists(atPath: occupied.path + "/note"))
    }

    /// Every name `LedgerLayout` spells is a row of the directory table, and
    /// every row names a file `LedgerLayout` spells: a file added to the
    /// ledger without its row (or a row without its file) fails here.
    @Test func theFormatPageListsEveryFileOfTheLayout() throws {
        let page = try String(contentsOfFile: Products.repositoryFile("Schemas/ledger-format.md"), encoding: .utf8)
        let lines = page.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "| path | what |"))
        let rows = lines[(start + 2)...].prefix { $0.hasPrefix("|") }
        var listed: Set<String> = []
        for row in rows {
            let cell = row.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            for part in cell.split(separator: "`") where !part.trimmingCharacters(in: .whitespaces).hasPrefix(",") {
                let name = part.trimmingCharacters(in: .whitespaces)
                if !name.isEmpty && name != "," { listed.insert(name) }
            }
        }
        let home = LedgerDirectory(path: "LEDGER")
        let paths = [
            home.storeDataPath, home.storeLockPath, home.rebuildLockPath, home.photosPath + "/<sha256 hex>",
            home.photosPath + "/" + LedgerLayout.photoStaging + "/", home.configPath, home.deviceKeyPath,
            home.pendingDeviceKeyPath, home.credentialsPath, home.credentialsLockPath, home.sessionRefusedPath,
            home.storeHeadPath, home.lastCheckpointPath, home.syncLockPath, home.syncInflightPath,
            home.syncDaemonStatusPath, home.witnessesPath, home.cosignedCheckpointPath, home.restorePointPath,
            home.salvageScratchPath + "/",
        ]
        let named = Set(paths.map { String($0.dropFirst("LEDGER/".count)) })
        #expect(named.subtracting(listed).sorted() == [], "files without a row")
        #expect(listed.subtracting(named).sorted() == [], "rows without a file")
    }
}
