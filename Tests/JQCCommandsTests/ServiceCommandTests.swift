import Foundation
import LedgerTestSupport
import Testing

/// `jqc service` through the built `jqc`: the user unit it writes (under
/// `$XDG_CONFIG_HOME`), accepted by `systemd-analyze verify`; enabling it
/// through `systemctl --user` when a user manager answers (a stand-in
/// `systemctl` that records its arguments), and what to run when none does.
@Suite struct ServiceCommandTests {
    let directory = TemporaryDirectory(prefix: "service-command")
    var config: String { directory.appending("config") }
    var calls: String { directory.appending("systemctl-calls") }

    /// A stand-in for `systemctl` that logs each call; `show-environment` answers `manager`.
    func systemctl(manager: Bool) throws -> String {
        let path = directory.appending("systemctl")
        let script = """
            #!/bin/sh
            echo "$*" >> '\(calls)'
            case "$2" in
              show-environment) exit \(manager ? 0 : 1) ;;
              is-active) echo active; exit 0 ;;
            esac
            exit 0

            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    func jqc(manager: Bool) throws -> JQCRunner {
        let runner = JQCRunner(
            ledger: directory.appending("my ledger"),
            environment: ["XDG_CONFIG_HOME": config, "JQC_SYSTEMCTL": try systemctl(manager: manager)])
        try #require(try runner("init").status == 0)
        return runner
    }

    var unitPath: String { config + "/systemd/user/jqc-sync.service" }

    /// `jqc --json ARGUMENTS`'s object; the command must succeed.
    func object(_ jqc: JQCRunner, _ arguments: String...) throws -> [String: Any] {
        let result = try jqc.run(["--json"] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func installWritesAUnitSystemdAcceptsAndEnablesIt() throws {
        let jqc = try jqc(manager: true)
        let installed = try object(jqc, "service", "install")
        #expect(installed["unit"] as? String == unitPath)
        #expect(installed["ledger"] as? String == directory.appending("my ledger"))
        #expect(installed["enabled"] as? Bool == true, "enabled and started jqc-sync.service")
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        #expect(unit.contains("ExecStart=\(Products.executable("jqc")) sync --daemon\n"), "\(unit)")
        #expect(unit.contains("Environment=\"JQC_HOME=\(directory.appending("my ledger"))\"\n"), "\(unit)")
        #expect(
            try String(contentsOfFile: calls, encoding: .utf8).contains(
                "--user daemon-reload\n--user show-environment\n--user enable --now jqc-sync.service\n")
                || String(contentsOfFile: calls, encoding: .utf8).contains("--user enable --now jqc-sync.service"))
        let verify = try ProcessRun.run("/usr/bin/env", ["systemd-analyze", "verify", "--man=no", unitPath])
        #expect(verify.status == 0, "systemd-analyze verify: \(verify.stderr)")

        let status = try object(jqc, "service", "status")
        #expect(status["state"] as? String == "active" && status["unit"] as? String == unitPath, "running: \(status)")
        let service = try object(jqc, "status")["service"] as? [String: Any]
        #expect(service?["state"] as? String == "active" && service?["unit"] as? String == unitPath, "running")

        let removed = try object(jqc, "service", "uninstall")
        #expect(removed["removed"] as? Bool == true && removed["unit"] as? String == unitPath, "\(removed)")
        #expect(!FileManager.default.fileExists(atPath: unitPath))
        #expect(try String(contentsOfFile: calls, encoding: .utf8).contains("--user disable --now jqc-sync.service"))
    }

    @Test func withoutAUserManagerItSaysWhatToRun() throws {
        let jqc = try jqc(manager: false)
        let installed = try jqc("service", "install")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(
            installed.stdout.contains(
                "No systemd user manager answers here, so nothing was started. From your login session run:\n"
                    + "  systemctl --user daemon-reload && systemctl --user enable --now jqc-sync.service\n"),
            "\(installed.stdout)")
        #expect(!(try String(contentsOfFile: calls, encoding: .utf8)).contains("enable"))
        #expect(try object(jqc, "service", "install")["enabled"] as? Bool == false)
        let status = try object(jqc, "service", "status")
        #expect(status["state"] as? String == "installed, no user manager" && status["unit"] as? String == unitPath)
    }

    @Test func theShippedUnitIsAcceptedBySystemd() throws {
        let jqc = JQCRunner(ledger: directory.appending("unused"))
        let unit = try jqc("service", "unit", "--exec", Products.executable("jqc"))
        #expect(unit.status == 0, "\(unit.stderr)")
        #expect(!unit.stdout.contains("JQC_HOME"), "each user's default ledger")
        let path = directory.appending("jqc-sync.service")
        try unit.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        let verify = try ProcessRun.run("/usr/bin/env", ["systemd-analyze", "verify", "--man=no", path])
        #expect(verify.status == 0, "systemd-analyze verify: \(verify.stderr)")
        let relative = try jqc("service", "unit", "--exec", "bin/jqc")
        #expect(relative.status == 2)
    }

    /// (definition, command): the `--json` outputs of `jqc service`, against their schemas.
    static let outputs: [(String, [String])] = [
        ("service_status", ["service"]), ("service_install", ["service", "install"]),
        ("service_status", ["service", "status"]), ("service_uninstall", ["service", "uninstall"]),
    ]

    @Test func everyJSONOutputMatchesItsSchema() throws {
        let jqc = try jqc(manager: false)
        for (definition, command) in Self.outputs {
            let result = try jqc.run(["--json"] + command)
            #expect(result.status == 0, "\(result.stderr)")
            let check = try JSONSchemaCheck.validate(definition, result.stdout)
            #expect(check.status == 0, "jqc --json \(command.joined(separator: " ")): \(check.stderr)")
        }
    }

    /// (ledger directory name, the `Environment=` line its unit holds): a
    /// newline that would add `ExecStartPre=`, quotes, a backslash, a
    /// specifier, a variable, a tab, a C1 control and a bidi override.
    static let hostileLedgerNames: [(String, String)] = [
        ("new\nExecStartPre=/bin/touch /tmp/x", #"new\x0aExecStartPre=/bin/touch /tmp/x""#),
        ("quote\" 'single'", #"quote\" 'single'""#), ("back\\slash\\", #"back\\slash\\""#),
        ("home %h 100%", #"home %%h 100%%""#), ("$HOME ${USER}", #"$HOME ${USER}""#),
        ("tab\there", #"tab\x09here""#), ("c1 \u{9B}2J \u{202E}evil", #"c1 \u009b2J \u202eevil""#),
        ("line\\\nend", #"line\\\x0aend""#),
    ]

    @Test(arguments: hostileLedgerNames)
    func aLedgerPathIsQuotedSoNoLineOfItBecomesASetting(name: String, environment: String) throws {
        let ledger = directory.appending(name)
        let jqc = JQCRunner(
            ledger: ledger,
            environment: ["XDG_CONFIG_HOME": config, "JQC_SYSTEMCTL": try systemctl(manager: false)])
        try #require(try jqc("init").status == 0)
        let installed = try jqc("service", "install")
        #expect(installed.status == 0, "\(installed.stderr)")
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        let lines = unit.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.filter { $0.hasPrefix("ExecStart") }.count == 1, "\(unit)")
        #expect(
            lines.filter { $0.hasPrefix("Environment=") } == ["Environment=\"JQC_HOME=\(directory.path)/\(environment)"]
        )
        #expect(lines.count == 15, "a line of the path became a line of the unit: \(unit)")
        let verify = try ProcessRun.run("/usr/bin/env", ["systemd-analyze", "verify", "--man=no", unitPath])
        #expect(verify.status == 0 && verify.stderr.isEmpty, "systemd-analyze verify: \(verify.stderr)")
    }

    /// The executable's name goes through the same quoting, and systemd reads
    /// it back exactly: `systemd-analyze verify` finds the file the unit names.
    @Test(arguments: ["plain", "with space", "per%cent %h", "$HOME ${X}", "\u{85} \u{202E}", "é漢字", "a;b"])
    func anExecutableNameIsReadBackBySystemdAsTheSameFile(name: String) throws {
        let executable = directory.appending("bin " + name)
        try FileManager.default.createSymbolicLink(atPath: executable, withDestinationPath: "/bin/true")
        let printed = try JQCRunner(ledger: directory.appending("unused"))("service", "unit", "--exec", executable)
        #expect(printed.status == 0, "\(printed.stderr)")
        let path = directory.appending("jqc-sync.service")
        try printed.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        let verify = try ProcessRun.run("/usr/bin/env", ["systemd-analyze", "verify", "--man=no", path])
        #expect(
            verify.status == 0 && verify.stderr.isEmpty, "systemd-analyze verify: \(verify.stderr)\n\(printed.stdout)")
    }

    /// An executable name systemd refuses however it is escaped: no unit.
    @Test(arguments: ["/opt/new\nExecStartPre=/bin/touch /tmp/x/jqc", "/opt/q\"uote/jqc", "/opt/back\\/jqc"])
    func anExecutableNameSystemdRefusesGivesNoUnit(executable: String) throws {
        let printed = try JQCRunner(ledger: directory.appending("unused")).reportingKinds(
            "service", "unit", "--exec", executable)
        #expect(printed.status == 1)
        #expect(printed.stdout.isEmpty, "\(printed.stdout)")
        #expect(printed.errorKind == "SyncServiceUnit.UnitRefusal", "\(printed.stderr)")
        #expect(printed.errorDetail?["value"] as? String == executable, "\(printed.stderr)")
    }

    /// A ledger path whose bytes are not UTF-8 cannot be named in a unit
    /// (systemd reads UTF-8; jqc sees U+FFFD): refused, nothing written.
    @Test func aLedgerPathThatIsNotUTF8IsRefused() throws {
        let script =
            #"l="$(printf "$1/bad\377name")"; "$0" --ledger "$l" init >/dev/null && exec "$0" --ledger "$l" service install"#
        let result = try ProcessRun.run(
            "/bin/sh", ["-c", script, Products.executable("jqc"), directory.path],
            environment: [
                "XDG_CONFIG_HOME": config, "JQC_SYSTEMCTL": try systemctl(manager: false), "NO_COLOR": "1",
                "JQC_ERRORS": "json",
            ])
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(result.errorKind == "SyncServiceUnit.UnitRefusal", "\(result.stderr)")
        #expect(result.errorDetail?["what"] as? String == "the ledger's path", "\(result.stderr)")
        #expect(result.errorDetail?["value"] as? String == "\(directory.path)/bad\u{FFFD}name", "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: unitPath))
    }
}
