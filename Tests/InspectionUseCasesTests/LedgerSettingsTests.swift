import Foundation
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The settings of `jqc config`, without `jqc`: what each accepts, where
/// the value in force comes from, and that a refusal changes nothing.
@Suite struct LedgerSettingsTests {
    let temporary = TemporaryDirectory(prefix: "ledger-settings")
    let directory: LedgerDirectory

    init() throws {
        directory = LedgerDirectory(path: temporary.path)
        try LedgerConfig(deviceID: UUID(), serverURL: nil, createdAt: ManualClock().now()).save(directory)
    }

    func settings(_ environment: [String: String] = [:]) -> LedgerSettings {
        LedgerSettings(directory: directory, environment: environment)
    }

    static let accepted: [(LedgerSetting, String, String)] = [
        (.server, "https://jqc.example/api/v1", "https://jqc.example/api/v1"),
        (.server, " http://127.0.0.1:8080/api/v1 ", "http://127.0.0.1:8080/api/v1"),
        (.witness, "https://witness.example/api/v1", "https://witness.example/api/v1"),
        (.actor, "  Dana Inspector ", "Dana Inspector"),
    ]

    @Test(arguments: accepted.indices)
    func aValueIsStoredAsChecked(index: Int) throws {
        let (setting, given, stored) = Self.accepted[index]
        #expect(try settings().set(setting, to: given) == nil)
        #expect(try settings().stored(setting) == stored)
        #expect(try settings().inForce(setting) == (stored, .config))
        // Read back from the file, as the next command reads it.
        let config = try LedgerConfig.load(directory)
        #expect([config.serverURL, config.witnessURL, config.actor].contains(stored))
    }

    static let refused: [(LedgerSetting, String, LedgerSettingError)] = [
        (.server, "jqc.example/api/v1", .notAURL(.server, "jqc.example/api/v1")),
        (.witness, "ftp://witness.example", .notAURL(.witness, "ftp://witness.example")),
        (.witness, "https://", .notAURL(.witness, "https://")),
        (.server, "https://a b", .notAURL(.server, "https://a b")),
        (.actor, " \u{200B} ", .invisibleName(" \u{200B} ")),
    ]

    @Test(arguments: refused.indices)
    func aRefusedValueChangesNothing(index: Int) throws {
        let (setting, given, error) = Self.refused[index]
        try settings().set(setting, to: setting == .actor ? "Kept" : "https://kept.example")
        let before = try Data(contentsOf: URL(fileURLWithPath: directory.configPath))
        #expect(throws: error) { try settings().set(setting, to: given) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.configPath)) == before)
        #expect(error.description.contains("nothing was changed"))
    }

    static let urls: [(String, String?)] = [
        ("https://jqc.example/api/v1", nil),
        ("http://127.0.0.1:8080/api/v1", nil),
        ("http://[::1]:8080/api/v1", nil),
        ("https://jqc.example", nil),
        ("http://host:", "the port after ':' is empty"),
        ("http://host:/api/v1", "the port after ':' is empty"),
        ("http://host:0/api", "the port '0' is not a number from 1 to 65535"),
        ("http://host:65536", "the port '65536' is not a number from 1 to 65535"),
        ("http://host:80a", "the port '80a' is not a number from 1 to 65535"),
        ("http://:8080/api", "it names no host"),
        ("http://dana:secret@host/api", "it names a user (@): log in with 'jqc login', never in the URL"),
        ("http://host/api?x=1", "a base URL has no query (?) or fragment (#)"),
        ("http://host#top", "a base URL has no query (?) or fragment (#)"),
        ("http://ho st/api", "it holds white space or a control character"),
        ("http://host\u{7}/api", "it holds white space or a control character"),
        ("http://h%74st/api", "the host 'h%74st' has a character a host name cannot have"),
        ("http://..host/api", "the host '..host' is not a host name"),
        ("http://[::1/api", "the IPv6 address has no closing ]"),
        ("http://[zz]/api", "the IPv6 address between [ and ] is not one"),
        ("http://[::1]x/api", "something other than :PORT follows the IPv6 address"),
        ("ftp://host", "it does not start with http:// or https://"),
    ]

    @Test(arguments: urls)
    func aMalformedURLIsRefusedSayingWhy(url: String, why: String?) throws {
        #expect(LedgerSettings.urlProblem(url) == why)
        guard why != nil else { return }
        do {
            _ = try LedgerSettings.checked(url, for: .server)
            Issue.record("accepted: \(url)")
        } catch {
            // Not http(s) at all, or white space: the plain refusal; else why it is unusable.
            let plain = !url.hasPrefix("http") || url.contains(" ")
            #expect(error == (plain ? .notAURL(.server, url) : .malformedURL(.server, url, why ?? "")))
        }
    }

    @Test func anUnknownSettingNamesTheSettings() throws {
        #expect(throws: LedgerSettingError.unknownSetting("colour")) { try LedgerSettings.setting(named: "colour") }
        #expect(
            LedgerSettingError.unknownSetting("colour").description
                == "there is no setting 'colour'; nothing was changed. The settings are server, witness, actor "
                + "('jqc config list' shows them).")
    }

    @Test func unsetAnswersTheValueItHadAndLeavesNone() throws {
        try settings().set(.witness, to: "https://witness.example")
        #expect(try settings().unset(.witness) == "https://witness.example")
        #expect(try settings().stored(.witness) == nil)
        #expect(try settings().inForce(.witness) == (nil, .none))
        #expect(try LedgerConfig.load(directory).witnessURL == nil)
        #expect(try settings().unset(.witness) == nil)
    }

    @Test func theEnvironmentsActorWinsOverTheConfigs() throws {
        try settings().set(.actor, to: "Config Name")
        #expect(try settings(["JQC_ACTOR": " Env Name "]).inForce(.actor) == ("Env Name", .environment))
        #expect(try settings(["JQC_ACTOR": ""]).inForce(.actor) == ("Config Name", .config))
        #expect(throws: LedgerSettingError.invisibleName("\u{7}")) {
            try settings(["JQC_ACTOR": "\u{7}"]).inForce(.actor)
        }
    }

    @Test func aConfigWithoutTheNewMembersStillReads() throws {
        let old = #"{"created_at":"2026-01-01T00:00:00Z","device_id":"5B2E6C1A-7E77-4C4B-9E0B-3F7C2E1D0A11"}"#
        try Data(old.utf8).write(to: URL(fileURLWithPath: directory.configPath))
        #expect(try settings().inForce(.witness) == (nil, .none))
        #expect(try settings().inForce(.actor) == (nil, .none))
    }
}
