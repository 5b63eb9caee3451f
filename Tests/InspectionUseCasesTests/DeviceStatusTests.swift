import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

@testable import InspectionStore
@testable import InspectionUseCases

/// What `jqc status` says, without `jqc`: who records, a refused session,
/// the server and witness, the last sync, what is not on the server and what
/// to do about it, the service; as text and as JSON.
@Suite struct DeviceStatusTests {
    static let user = ServerUser(id: "u-7", username: "dana", role: "inspector", displayName: "Dana Inspector")
    static let saved = StoredSession(
        user: user, tokens: SessionTokens(accessToken: "a", refreshToken: "r"), serverURL: "http://server.test",
        savedAt: "2026-11-30T08:00:00Z")
    static let nothing = SyncStanding(
        drafts: 0, draftPhotos: 0, waiting: [:], stalled: [], failed: [], leftOut: 0)

    static func status(
        _ standing: SyncStanding = nothing, saved: StoredSession? = nil, refusal: SessionRefusal? = nil,
        offline: (value: String?, source: SettingSource) = (nil, .none), server: String? = nil,
        witness: String? = nil, service: SyncServiceUnit.State = .notInstalled
    ) -> DeviceStatus {
        DeviceStatus(
            standing: standing, saved: saved, refusal: refusal, offline: offline, server: server, witness: witness,
            service: service)
    }

    /// Who records, in each way it can be: the first line (and a refusal's second), the JSON's identity and session.
    struct Identity: Sendable, CustomTestStringConvertible {
        let name: String
        let status: DeviceStatus
        let lines: [String]
        let source: String?
        let session: String
        var testDescription: String { name }
    }

    static let identities: [Identity] = [
        Identity(
            name: "nobody", status: status(),
            lines: [
                "Identity   nobody logged in; 'jqc login' to sync (offline: 'jqc config set actor NAME' or JQC_ACTOR names who records)"
            ],
            source: nil, session: "none"),
        Identity(
            name: "an actor set in the config", status: status(offline: ("Dana", .config)),
            lines: [
                "Identity   nobody logged in; recording as Dana (from 'jqc config set actor', unverified); "
                    + "'jqc login' to sync"
            ], source: "config", session: "none"),
        Identity(
            name: "JQC_ACTOR, with a line break", status: status(offline: ("Eve\nServer     forged", .environment)),
            lines: [
                "Identity   nobody logged in; recording as Eve\\nServer     forged (from JQC_ACTOR, unverified); "
                    + "'jqc login' to sync"
            ], source: "environment", session: "none"),
        Identity(
            name: "a login", status: status(saved: saved),
            lines: ["Identity   Dana Inspector (dana, user u-7), logged in 2026-11-30T08:00:00Z"],
            source: "login", session: "saved"),
        Identity(
            name: "a login the server refused",
            status: status(
                saved: saved,
                refusal: SessionRefusal(
                    sessionSavedAt: saved.savedAt, refusedAt: "2026-11-30T09:00:00Z", message: "token revoked")),
            lines: [
                "Identity   Dana Inspector (dana, user u-7), logged in 2026-11-30T08:00:00Z",
                "           the server REFUSED this session at 2026-11-30T09:00:00Z (token revoked): log in again "
                    + "with 'jqc login'; recording goes on meanwhile",
            ], source: "login", session: "refused"),
    ]

    @Test(arguments: identities)
    func whoRecords(_ identity: Identity) {
        let lines = identity.status.lines
        #expect(Array(lines.prefix(identity.lines.count)) == identity.lines)
        #expect(lines[identity.lines.count].hasPrefix("Server     "))
        let json = identity.status.jsonValue
        #expect(json["identity"]?["source"]?.stringValue == identity.source)
        #expect(json["identity"]?["verified"]?.boolValue == (identity.source.map { $0 == "login" }))
        #expect(json["session"]?["state"]?.stringValue == identity.session)
        #expect(json["session"]?["message"]?.stringValue == (identity.session == "refused" ? "token revoked" : nil))
    }

    @Test func theServerWitnessAndServiceLines() {
        let bare = Self.status().lines
        #expect(bare[1] == "Server     none; set one with 'jqc config set server URL'")
        #expect(bare[2] == "Witness    " + WitnessSetting.notConfigured.dropFirst("witness: ".count))
        #expect(bare.last == "Service    " + SyncServiceUnit.State.notInstalled.line)
        let set = Self.status(
            server: "http://server.test", witness: "http://witness.test",
            service: .running(unit: "/u/jqc-sync.service", word: "active"))
        #expect(set.lines[1] == "Server     http://server.test")
        #expect(set.lines[2] == "Witness    http://witness.test")
        #expect(
            set.jsonValue["service"] == .object(["state": .string("active"), "unit": .string("/u/jqc-sync.service")]))
        #expect(set.jsonValue["witness"]?.stringValue == "http://witness.test")
    }

    static let inspectionID = UUID(uuidString: "9f8e7d6c-0000-4000-8000-000000000002")!

    static func row(
        _ kind: SyncItemKind, _ state: SyncState, error: String?, next: Timestamp? = nil, ownItem: Bool = false
    ) -> OutboxItem {
        OutboxItem(
            item: SyncItem(
                kind: kind, id: ownItem ? inspectionID : UUID(uuidString: "0a1b2c3d-0000-4000-8000-000000000001")!),
            inspectionID: UUID(uuidString: "9f8e7d6c-0000-4000-8000-000000000002")!, state: state, attempts: 6,
            nextAttemptAt: next, lastError: error, lastHTTPStatus: nil)
    }

    /// What is not on the server, each kind with what to do: the lines after "Last sync".
    struct Standing: Sendable, CustomTestStringConvertible {
        let name: String
        let standing: SyncStanding
        let lines: [String]
        var testDescription: String { name }
    }

    static let standings: [Standing] = [
        Standing(
            name: "nothing", standing: nothing,
            lines: ["Not on the server yet: nothing; the server has everything this device recorded."]),
        Standing(
            name: "another device's submitted copy, and an inspection the server holds twice",
            standing: {
                var standing = nothing
                standing.expectedElsewhere = [
                    InspectionNote(
                        inspection: UUID(uuidString: "9f8e7d6c-0000-4000-8000-000000000001")!,
                        note: "submitted on device 0a1b2c3d, which is expected to send it: not reported sent yet")
                ]
                standing.serverRecordsTwice = [
                    InspectionNote(
                        inspection: UUID(uuidString: "5e5e5e5e-0000-4000-8000-000000000002")!,
                        note: "the server holds 2 records of this inspection: remove server id 5051")
                ]
                return standing
            }(),
            lines: [
                "Not on the server yet:",
                "  another device sends  inspection 9f8e7d6c: submitted on device 0a1b2c3d, which is expected to "
                    + "send it: not reported sent yet",
                "  photos                0 not on the server",
                "  inspection 5e5e5e5e  the server holds 2 records of this inspection: remove server id 5051",
            ]),
        Standing(
            name: "a draft with two photos",
            standing: SyncStanding(drafts: 1, draftPhotos: 2, waiting: [:], stalled: [], failed: [], leftOut: 0),
            lines: [
                "Not on the server yet:",
                "  drafts not submitted  1 (2 photos); sent once submitted ('jqc submit ID')",
                "  photos                2 not on the server",
            ]),
        Standing(
            name: "waiting, by kind",
            standing: SyncStanding(
                drafts: 0, draftPhotos: 0, waiting: [.photo: 1, .inspection: 2], stalled: [], failed: [], leftOut: 1),
            lines: [
                "Not on the server yet:",
                "  submitted, waiting    1 photo, 2 inspections; the next sync sends them",
                "  photos                1 not on the server",
                "  (1 photo failed for good earlier and went without: see 'jqc outbox')",
            ]),
        Standing(
            name: "stalled and failed for good, their messages on one line",
            standing: SyncStanding(
                drafts: 0, draftPhotos: 0, waiting: [:],
                stalled: [
                    row(
                        .inspection, .stalled, error: "timed out\n  forged",
                        next: Timestamp(microsecondsSinceEpoch: 1_764_489_600_500_000))
                ],
                failed: [row(.issue, .failed, error: nil)], leftOut: 0),
            lines: [
                "Not on the server yet:",
                "  stalled               inspection 0a1b2c3d of inspection 9f8e7d6c after 6 attempts, next try "
                    + "2025-11-30T08:00:00Z: timed out\\n  forged",
                "  failed for good       issue 0a1b2c3d of inspection 9f8e7d6c: refused; fix the cause, then "
                    + "'jqc sync retry 9f8e7d6c'",
                "  photos                0 not on the server",
            ]),
        Standing(
            name: "an inspection's own item named once, a reason that says when to retry not told twice",
            standing: SyncStanding(
                drafts: 0, draftPhotos: 0, waiting: [:],
                stalled: [row(.inspection, .stalled, error: "timed out", ownItem: true)],
                failed: [
                    row(
                        .issue, .failed,
                        error: "held back: its inspection was refused. Run 'jqc sync retry 9f8e7d6c' once the "
                            + "inspection can be sent.")
                ], leftOut: 0),
            lines: [
                "Not on the server yet:",
                "  stalled               inspection 9f8e7d6c after 6 attempts: timed out",
                "  failed for good       issue 0a1b2c3d of inspection 9f8e7d6c: held back: its inspection was "
                    + "refused. Run 'jqc sync retry 9f8e7d6c' once the inspection can be sent.",
                "  photos                0 not on the server",
            ]),
    ]

    @Test(arguments: standings)
    func whatIsNotOnTheServer(_ case: Standing) throws {
        let lines = Self.status(`case`.standing, server: "http://server.test").lines
        let start = try #require(lines.firstIndex { $0.hasPrefix("Last sync  ") }) + 1
        #expect(Array(lines[start..<(lines.count - 1)]) == `case`.lines)
        let json = try #require(Self.status(`case`.standing, server: "http://server.test").jsonValue["not_on_server"])
        #expect(json["server_has_everything"]?.boolValue == `case`.standing.serverHasEverything)
        #expect(json["drafts"] == .integer(`case`.standing.drafts))
        #expect(json["photos"] == .integer(`case`.standing.photos))
        let failed = try #require(json["failed"]?.arrayValue)
        #expect(
            failed.map { $0["what_to_do"]?.stringValue }
                == `case`.standing.failed.map { "fix the cause, then jqc sync retry \($0.inspectionID.lowercased)" })
    }

    /// A fresh ledger read as `jqc status` reads it says the server has everything.
    @Test func aFreshLedgerHasNothingOffTheServer() throws {
        let temporary = TemporaryDirectory(prefix: "device-status")
        let ledger = try InspectionLedger(
            storePath: temporary.appending("store"), photosPath: temporary.appending("photos"), access: .creating)
        defer { ledger.close() }
        let status = Self.status(try SyncStanding.read(ledger), server: "http://server.test")
        #expect(status.lines[3] == "Last sync  nothing sent yet")
        #expect(status.lines[4] == "Not on the server yet: nothing; the server has everything this device recorded.")
        // With no server, it never says the server has everything.
        let offline = Self.status(try SyncStanding.read(ledger))
        #expect(
            offline.lines[4].hasPrefix("Not on the server yet: nothing waits to be sent, but no server is configured"))
        #expect(offline.jsonValue["not_on_server"]?["server_has_everything"] == .bool(false))
        #expect(status.jsonValue["last_sync"] == .object(["sent_at": .null, "attempted_at": .null]))
    }
}
