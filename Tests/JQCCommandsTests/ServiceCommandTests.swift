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

    @Test func installWritesAUnitSystemdAcceptsAndEnablesIt() throws {
        let jqc = try jqc(manager: true)
        let installed = try jqc("service", "install")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(
            installed.stdout.contains("Wrote \(unitPath) (jqc sync --daemon on \(directory.appending("my ledger")))."))
        #expect(installed.stdout.contains("Enabled and started jqc-sync.service"), "\(installed.stdout)")
        #expect(installed.stdout.contains("journalctl --user -u jqc-sync.service"))
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        #expect(unit.contains("ExecStart=\(Products.executable("jqc")) sync --daemon\n"), "\(unit)")
        #expect(unit.contains("Environment=\"JQC_HOME=\(directory.appending("my ledger"))\"\n"), "\(unit)")
        #expect(
            try String(contentsOfFile: calls, encoding: .utf8).contains(
                "--user daemon-reload\n--user show-environment\n--user enable --now jqc-sync.service\n")
                || String(contentsOfFile: calls, encoding: .utf8).contains("--user enable --now jqc-sync.service"))
        let verify = try ProcessRun.run("/usr/bin/env", ["systemd-analyze", "verify", "--man=no", unitPath])
        #expect(verify.status == 0, "systemd-analyze verify: \(verify.stderr)")

        let status = try jqc("service", "status")
        #expect(
            status.stdout.contains(
                "jqc-sync.service: running (\(unitPath)); what it did: journalctl --user -u jqc-sync.service"),
            "\(status.stdout)")
        #expect(try jqc("status").stdout.contains("Service    running (\(unitPath))"))

        let removed = try jqc("service", "uninstall")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("Removed \(unitPath)"), "\(removed.stdout)")
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
        #expect(
            try jqc("service", "status").stdout.contains("installed (\(unitPath)) but no systemd user manager answers"))
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
}
