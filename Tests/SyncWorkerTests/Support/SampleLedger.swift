import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import SyncWorker

/// A ledger made by `jqc init` for one test, with inspections recorded
/// in-process the way the commands record them (`decide`, then one append),
/// which is much faster than a process per field.
final class SampleLedger: @unchecked Sendable {
    let directory = TemporaryDirectory(prefix: "sync-ledger")
    let ledger: InspectionLedger
    let device: UUID
    let clock = SystemClock()
    let actor = Actor(id: "1", name: "Dana Inspector", verified: true)
    private var photoCounter = 0

    var path: String { directory.appending("ledger") }
    var jqc: JQCRunner { JQCRunner(ledger: path, environment: ["JQC_SYNC_BACKOFF_SCALE": "0"]) }
    var credentialsPath: String { path + "/credentials.json" }

    /// Saves a session of "Dana Inspector" with `server`'s current tokens,
    /// as `jqc login` against it would have.
    func logIn(to server: ScriptedTransport, serverURL: String = "http://fake.test/api/v1") throws {
        try SessionStore(path: credentialsPath).save(
            StoredSession(
                user: ServerUser(id: "1", username: "inspector", role: "inspector", displayName: "Dana Inspector"),
                tokens: SessionTokens(accessToken: server.accessToken, refreshToken: server.refreshToken),
                serverURL: serverURL, savedAt: "2026-03-01T08:00:00Z"))
    }

    /// A ledger whose server is `serverURL`, with `Tools/fixtures/reference.json`
    /// (or `reference`) in its cache, and `witness` as its witness (none by default).
    init(serverURL: String, reference: JSONValue? = nil, witness: String? = nil) throws {
        let made = try JQCRunner(ledger: directory.appending("ledger")).run(
            ["init", "--server", serverURL] + (witness.map { ["--witness", $0] } ?? []))
        guard made.status == 0 else { throw SampleFailure("jqc init failed: \(made.stderr)") }
        let config = try JSONValue(
            parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.appending("ledger/config.json")))))
        guard let deviceText = config["device_id"]?.stringValue, let device = UUID(uuidString: deviceText) else {
            throw SampleFailure("config.json has no device id")
        }
        self.device = device
        ledger = try InspectionLedger(
            storePath: directory.appending("ledger/store"), photosPath: directory.appending("ledger/photos"))
        let json =
            try reference
            ?? JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
        try ledger.reference.replace(with: try ReferenceCache.Snapshot(json: json), at: clock.now())
    }

    deinit { ledger.close() }

    /// `jqc login` as the development server's inspector.
    func login() throws {
        let result = try jqc.run(
            ["login", "--username", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        guard result.status == 0 else { throw SampleFailure("jqc login failed: \(result.stderr)") }
    }

    /// The saved session.
    func session() throws -> StoredSession {
        guard let saved = try SessionStore(path: credentialsPath).load() else { throw SampleFailure("not logged in") }
        return saved
    }

    // MARK: - Recording

    /// Decides `command` on the inspection's current state and records the events.
    @discardableResult
    func record(_ command: InspectionCommand, on id: UUID) throws -> InspectionState {
        let state = try ledger.state(of: id) ?? InspectionState(id: id)
        let events = try state.decide(command)
        try ledger.record(
            events, stream: id, expectedVersion: UInt64(state.eventCount), actor: actor, device: device,
            at: clock.now())
        return try ledger.state(of: id)!
    }

    /// A draft of `Restroom QC` (template 11) at facility 101, area 1001.
    func draft(facility: String = "101", area: String? = "1001") throws -> UUID {
        guard let template = try ledger.reference.template(id: "11"),
            let facilityRow = try ledger.reference.facility(id: facility)
        else { throw SampleFailure("the reference data lacks template 11 or facility \(facility)") }
        let pinned = try ledger.pinnedTemplate(hash: template.contentHash) != nil
        let id = UUID()
        let areaName = facilityRow.areas.first { $0.id == area }?.name
        try record(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: pinned, facilityID: facilityRow.id,
                    facilityName: facilityRow.name, areaID: area, areaName: areaName)), on: id)
        return id
    }

    /// A completed inspection with its required answers, `photos` photos
    /// (the image field, then the signature) and `issues` issues (the first
    /// with a photo when `issuePhoto`).
    @discardableResult
    func completedInspection(
        photos: Int = 2, issues: Int = 1, issuePhoto: Bool = true, followUp: Bool = false, facility: String = "101",
        area: String? = "1001"
    ) throws -> UUID {
        let id = try draft(facility: facility, area: area)
        try answer(id)
        for (index, field) in ["10", "11"].prefix(photos).enumerated() where index < photos {
            try record(.capturePhoto(try storedPhoto(), for: .field(field)), on: id)
        }
        for index in 0..<issues {
            let photo = index == 0 && issuePhoto ? try storedPhoto() : nil
            try record(
                .flagIssue(
                    FlagIssue(
                        issueID: UUID(), severity: "high", description: "Leaking tap \(index + 1)", photo: photo)),
                on: id)
        }
        try record(.submit(followUpRequired: followUp), on: id)
        return id
    }

    /// A re-inspection of a completed inspection that needs follow-up, submitted.
    @discardableResult
    func completedReinspection(of parent: UUID) throws -> UUID {
        guard let parentState = try ledger.state(of: parent) else { throw SampleFailure("no parent \(parent)") }
        let id = UUID()
        try record(.start(try StartInspection.reinspection(of: parentState)), on: id)
        try answer(id)
        try record(.submit(followUpRequired: false), on: id)
        return id
    }

    /// The required answers of template 11, and a few more.
    func answer(_ id: UUID) throws {
        let answers = [
            ("2", "4"), ("3", "5"), ("5", "pass"), ("7", "yes"), ("8", "Good"), ("9", "Clean, one tap leaks"),
        ]
        for (field, value) in answers {
            try record(.setField(field: field, to: .text(value)), on: id)
        }
    }

    /// A new small PNG kept in the photo store, different from every other.
    func storedPhoto() throws -> PhotoReference {
        photoCounter += 1
        let file = directory.appending("photo-\(photoCounter).png")
        try SampleReference.png(width: 2 + photoCounter / 200, height: 2, red: UInt8(photoCounter % 200))
            .write(to: URL(fileURLWithPath: file))
        let prepared = try ledger.photos.prepare(fileAt: file)
        try ledger.photos.keep(prepared)
        return PhotoReference(
            photoID: UUID(), sha256: Digest256(hex: prepared.description.sha256)!, size: prepared.description.size,
            mediaType: prepared.description.mediaType)
    }

    // MARK: - Reading

    /// The types of every event in the log, in order.
    func eventTypes() throws -> [String] {
        try ledger.log.read { reader in
            var types: [String] = []
            try reader.forEachRecord { record in
                types.append(record.type)
                return true
            }
            return types
        }
    }

    /// The bytes of the LMDB data file, to search for what must never be stored.
    func storeBytes() throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: directory.appending("ledger/store/data.mdb")))
    }
}

/// A test's own setup failed.
struct SampleFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Data {
    /// Whether `needle` occurs anywhere in these bytes.
    func contains(bytes needle: String) -> Bool {
        range(of: Data(needle.utf8)) != nil
    }
}
