import Foundation
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

@testable import InspectionUseCases

/// What `jqc config` says, without `jqc`: the list of settings in force and
/// where each comes from, a setting with no value, and what a change means
/// now (another server's session, the witness, an actor recorded over).
@Suite struct SettingsReportTests {
    let temporary = TemporaryDirectory(prefix: "settings-report")
    let directory: LedgerDirectory

    init() throws {
        directory = LedgerDirectory(path: temporary.path)
        try LedgerConfig(deviceID: UUID(), serverURL: nil, createdAt: ManualClock().now()).save(directory)
    }

    static let session = StoredSession(
        user: ServerUser(id: "u-7", username: "dana", role: "inspector", displayName: "Dana\nInspector"),
        tokens: SessionTokens(accessToken: "a", refreshToken: "r"), serverURL: "https://jqc.example/api/v1/",
        savedAt: "2026-11-30T08:00:00Z")

    @Test func theListSaysEachValueInForceAndWhereItComesFrom() throws {
        let settings = LedgerSettings(directory: directory, environment: ["JQC_ACTOR": "Eve"])
        try settings.set(.server, to: "https://jqc.example/api/v1")
        let rows = try SettingsReport.rows(settings)
        #expect(
            rows.map(\.line) == [
                "server  https://jqc.example/api/v1", "witness (none)", "actor   Eve (from JQC_ACTOR)",
            ])
        #expect(
            SettingsReport.listJSON(rows)["settings"]?.arrayValue?.map { $0["source"]?.stringValue }
                == ["config", "none", "environment"])
        #expect(rows[1].jsonValue == .object(["key": .string("witness"), "value": .null, "source": .string("none")]))
    }

    /// `config get` of each setting with no value: refused, saying how to set it.
    @Test(arguments: LedgerSetting.allCases)
    func aSettingWithNoValueIsRefused(_ setting: LedgerSetting) throws {
        let row = SettingsReport.Row(setting: setting, value: nil, source: .none)
        #expect(throws: SettingNotSet(setting: setting)) { try row.requireValue() }
        let refusal = SettingNotSet(setting: setting).description
        #expect(refusal.hasPrefix("\(setting.rawValue) is not set (\(setting.meaning))."))
        // A witness is added with its key ('jqc witness add'); the others are set by 'jqc config set'.
        let how =
            setting == .witness
            ? "'jqc witness add URL --key VKEY'."
            : "'jqc config set \(setting.rawValue) \(setting == .actor ? "NAME" : "URL")'."
        #expect(refusal.hasSuffix(how))
        #expect(
            try SettingsReport.Row(setting: setting, value: "a\u{1B}b", source: .config).requireValue()
                == "a\\u{1B}b")
    }

    /// A change, the session and the actor's source as they stand, and what `config set` says.
    struct Change: Sendable, CustomTestStringConvertible {
        let name: String
        let setting: LedgerSetting
        let now: String
        let previous: String?
        let session: StoredSession?
        let fromEnvironment: Bool
        let lines: [String]
        var testDescription: String { name }
    }

    static let changes: [Change] = [
        Change(
            name: "a server, the session's", setting: .server, now: "https://jqc.example/api/v1", previous: nil,
            session: session, fromEnvironment: false, lines: ["server set to https://jqc.example/api/v1."]),
        Change(
            name: "another server than the session's", setting: .server, now: "https://other.example",
            previous: "https://jqc.example/api/v1", session: session, fromEnvironment: false,
            lines: [
                "server set to https://other.example (was https://jqc.example/api/v1).",
                "The saved session is for https://jqc.example/api/v1/; log in to this server with 'jqc login'.",
            ]),
        Change(
            name: "a witness", setting: .witness, now: "https://w.example", previous: nil, session: nil,
            fromEnvironment: false,
            lines: [
                "witness set to https://w.example.", "Each sync now sends this device's checkpoint to the witness.",
            ]),
        Change(
            name: "an actor JQC_ACTOR and a login record over", setting: .actor, now: "Kim", previous: "Lee\nForged",
            session: session, fromEnvironment: true,
            lines: [
                "actor set to Kim (was Lee\\nForged).", "JQC_ACTOR is set and wins over it while it is.",
                "Dana\\nInspector is logged in and is recorded instead until 'jqc logout'.",
            ]),
        Change(
            name: "an actor in force", setting: .actor, now: "Kim", previous: nil, session: nil,
            fromEnvironment: false, lines: ["actor set to Kim."]),
    ]

    @Test(arguments: changes)
    func aChangeSaysWhatItMeansNow(_ change: Change) throws {
        var said: [String] = []
        var asked: Set<String> = []
        try SettingsReport.sayChange(
            of: change.setting, now: change.now, previous: change.previous,
            session: {
                asked.insert("session")
                return change.session
            },
            actorSource: {
                asked.insert("actor")
                return change.fromEnvironment ? .environment : .config
            }, say: { said.append($0) })
        #expect(said == change.lines)
        // Only what bears on the setting is asked.
        let expected: Set<String> =
            switch change.setting {
            case .server: ["session"]
            case .witness: []
            case .actor: ["session", "actor"]
            }
        #expect(asked == expected)
    }

    /// A session that cannot be read fails the change's report after the line of the change itself.
    @Test func anUnreadableSessionFailsAfterTheChangeIsSaid() throws {
        struct Unreadable: Error {}
        var said: [String] = []
        #expect(throws: Unreadable.self) {
            try SettingsReport.sayChange(
                of: .server, now: "https://x.example", previous: nil, session: { throw Unreadable() },
                actorSource: { .config }, say: { said.append($0) })
        }
        #expect(said == ["server set to https://x.example."])
    }

    @Test(arguments: [
        (
            LedgerSetting.witness, "https://w.example" as String?,
            [
                "witness unset (was https://w.example).",
                "Syncs no longer send checkpoints to a witness; the history is not witnessed.",
            ]
        ),
        (.server, "https://jqc.example", ["server unset (was https://jqc.example)."]),
        (.actor, nil, ["actor was not set; nothing was changed."]),
    ])
    func anUnsetSaysWhatWasThere(setting: LedgerSetting, previous: String?, lines: [String]) {
        #expect(SettingsReport.unsetLines(setting, previous: previous) == lines)
        #expect(
            SettingsReport.changeJSON(setting, now: nil, previous: previous)
                == .object([
                    "key": .string(setting.rawValue), "value": .null, "previous": previous.map { .string($0) } ?? .null,
                ]))
    }

    @Test(arguments: [
        ("https://jqc.example/api/v1", "https://jqc.example/api/v1//", true),
        ("https://jqc.example/api/v1", "https://jqc.example/api/v2", false),
        ("http://jqc.example", "https://jqc.example", false),
    ])
    func theSameServerIsEqualButForTrailingSlashes(a: String, b: String, same: Bool) {
        #expect(LedgerSettings.sameServer(a, b) == same)
        #expect(LedgerSettings.sameServer(b, a) == same)
    }
}
