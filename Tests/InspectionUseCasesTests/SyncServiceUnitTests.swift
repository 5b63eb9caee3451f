import Foundation
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The background sync as a systemd user service, without `jqc` or a real
/// user manager: the unit's text, where it goes, and what the service's
/// state is made of (a stand-in `systemctl` through `JQC_SYSTEMCTL`).
@Suite struct SyncServiceTests {
    /// (text, as a word of a unit): quoted and escaped per systemd.syntax(7)
    /// so that systemd reads back the text, and no newline of it can end the
    /// setting's line.
    static let quoting: [(text: String, word: String)] = [
        ("/usr/bin/jqc", "/usr/bin/jqc"), ("/opt/my tools/jqc", #""/opt/my tools/jqc""#),
        ("/a\"b\\c", #""/a\"b\\c""#), ("/100%/jqc %h", #""/100%%/jqc %%h""#), ("/$HOME/${X}", #""/$HOME/${X}""#),
        ("/new\nExecStartPre=/bin/touch /tmp/x", #""/new\x0aExecStartPre=/bin/touch /tmp/x""#),
        ("/ends\\", #""/ends\\""#), ("/t\tr\r\u{7F}", #""/t\x09r\x0d\x7f""#),
        ("/c1\u{9B}bidi\u{202E}", #""/c1\u009bbidi\u202e""#), ("/it's é", #""/it's é""#), ("", #""""#),
    ]

    @Test(arguments: quoting)
    func aWordSystemdReadsBackAsTheText(text: String, word: String) {
        #expect(SyncServiceUnit.word(text) == word)
    }

    /// (executable, ledger, what is refused): text that was not UTF-8, and an
    /// executable name systemd refuses however it is escaped.
    static let unnameable: [(String, String?, String)] = [
        (
            "/usr/bin/jqc", "/data/bad\u{FFFD}name",
            "the ledger's path /data/bad\u{FFFD}name holds bytes that are not UTF-8"
        ),
        ("/opt/bad\u{FFFD}/jqc", nil, "the jqc to run /opt/bad\u{FFFD}/jqc holds bytes that are not UTF-8"),
        ("/opt/it's/jqc", nil, "the jqc to run /opt/it's/jqc holds a quote, a backslash or a control character"),
        ("/opt/new\nx/jqc", "/data", #"the jqc to run /opt/new\nx/jqc holds a quote, a backslash or a control"#),
    ]

    @Test(arguments: unnameable)
    func whatNoUnitCanNameIsRefused(executable: String, ledger: String?, refused: String) {
        let refusal = #expect(throws: SyncServiceUnit.UnitRefusal.self) {
            try SyncServiceUnit.unit(executable: executable, ledger: ledger)
        }
        #expect(refusal?.description.contains(refused) == true, "\(String(describing: refusal))")
        #expect(refusal?.description.contains("nothing was written") == true)
    }

    @Test func theUnitRunsTheDaemonOnTheLedgerGiven() throws {
        let unit = try SyncServiceUnit.unit(executable: "/opt/my tools/jqc", ledger: "/data/ledger")
        #expect(unit.contains("ExecStart=\"/opt/my tools/jqc\" sync --daemon\n"))
        #expect(unit.contains("Environment=JQC_HOME=/data/ledger\n"))
        #expect(unit.contains("Restart=on-failure\n"))
        #expect(try !SyncServiceUnit.unit(executable: "/usr/bin/jqc", ledger: nil).contains("Environment="))
    }

    @Test func theUserUnitGoesUnderXDGConfigHomeElseHome() {
        #expect(
            SyncServiceUnit(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]).userUnitPath
                == "/x/systemd/user/jqc-sync.service")
        #expect(
            SyncServiceUnit(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]).userUnitPath
                == "/h/.config/systemd/user/jqc-sync.service")
    }

    /// A stand-in `systemctl` that answers `word` to `is-active` and exits with `status`.
    static func systemctl(in temporary: TemporaryDirectory, answering word: String, status: Int32) throws -> String {
        let path = temporary.appending("systemctl")
        let script = """
            #!/bin/sh
            case "$2" in
            show-environment) exit \(status) ;;
            is-active) echo \(word); exit 0 ;;
            esac
            exit 1
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    @Test func theStateIsTheUnitInForceAndWhatTheManagerSays() throws {
        let temporary = TemporaryDirectory(prefix: "sync-service")
        let config = temporary.appending("config")
        let noUnit = SyncServiceUnit(environment: ["XDG_CONFIG_HOME": config, "JQC_SYSTEMCTL": "/nonexistent"])
        if noUnit.installedUnitPath == nil { #expect(noUnit.state() == .notInstalled) }
        try FileManager.default.createDirectory(atPath: config + "/systemd/user", withIntermediateDirectories: true)
        let unit = config + "/systemd/user/jqc-sync.service"
        try Data(try SyncServiceUnit.unit(executable: "/usr/bin/jqc", ledger: nil).utf8).write(
            to: URL(fileURLWithPath: unit))
        let active = try Self.systemctl(in: temporary, answering: "active", status: 0)
        let running = SyncServiceUnit(environment: ["XDG_CONFIG_HOME": config, "JQC_SYSTEMCTL": active]).state()
        #expect(running == .running(unit: unit, word: "active"))
        #expect(running.line.hasPrefix("running (\(unit))"))
        let silent = try Self.systemctl(in: temporary, answering: "active", status: 1)
        let unanswered = SyncServiceUnit(environment: ["XDG_CONFIG_HOME": config, "JQC_SYSTEMCTL": silent]).state()
        #expect(unanswered == .noUserManager(unit: unit))
        #expect(unanswered.word == "installed, no user manager")
    }
}
