import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// `jqc status` and the outbox's wording through the built `jqc`: a draft is
/// never "on the server"; `status --json` counts it and matches its schema.
@Suite struct StatusCommandTests {
    let directory = TemporaryDirectory(prefix: "status-command")
    let jqc: JQCRunner

    init() throws {
        // No user unit and no systemctl to ask: the service's state is the files'.
        jqc = JQCRunner(
            ledger: directory.appending("ledger"),
            environment: ["XDG_CONFIG_HOME": directory.appending("config"), "JQC_SYSTEMCTL": "/nonexistent"])
        try #require(try jqc("init").status == 0)
        try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
    }

    @Test func aFreshLedgerHasNothingOffTheServer() throws {
        let status = try jqc("status")
        #expect(status.status == 0, "\(status.stderr)")
        let expected: [String] = [
            "Identity   nobody logged in; 'jqc login' to sync (offline: 'jqc config set actor NAME' or JQC_ACTOR names who records)",
            "Server     none; set one with 'jqc config set server URL'",
            "Witness    none configured, so no one outside this device keeps a checkpoint of its history; "
                + "add a C2SP witness with 'jqc witness add URL --key VKEY' (its submission prefix and cosigner "
                + "key, from its operator)",
            "Last sync  nothing sent yet",
            // No server: never "the server has everything".
            "Not on the server yet: nothing waits to be sent, but no server is configured: nothing reaches "
                + "one until 'jqc config set server URL'",
        ]
        #expect(Array(status.stdout.components(separatedBy: "\n").prefix(5)) == expected, "\(status.stdout)")
        #expect(
            status.stdout.contains(
                "Service    not installed: nothing syncs by itself; 'jqc service install' syncs in the background"))
        let outbox: String =
            "The outbox is empty; no server is configured, so nothing has reached one ('jqc config set server "
            + "URL'). 'jqc status' lists copies another device is expected to send.\n"
        #expect(try jqc("outbox").stdout == outbox)
        let json = try JSONValue(parsing: try jqc("--json", "status").stdout)
        #expect(json["not_on_server"]?["server_has_everything"] == .bool(false))
    }

    @Test func aDraftIsNotOnTheServerAndTheOutboxSaysSo() throws {
        let started = try jqc(
            "--as", "Dana", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center")
        #expect(started.status == 0, "\(started.stderr)")
        let outbox = try jqc("outbox")
        #expect(
            outbox.stdout
                == "The outbox is empty, but 1 draft is only on this device: nothing of an inspection is sent "
                + "before 'jqc submit ID' ('jqc status' counts what is not on the server).\n")
        #expect(!outbox.stdout.contains("the server has everything"))
        #expect(try jqc("config", "set", "actor", "Dana").status == 0)
        let status = try jqc("status")
        #expect(
            status.stdout.contains(
                "Identity   nobody logged in; recording as Dana (from 'jqc config set actor', unverified)"),
            "\(status.stdout)")
        #expect(
            status.stdout.contains(
                "Not on the server yet:\n  drafts not submitted  1; sent once submitted ('jqc submit ID')\n  photos                0 not on the server\n"
            ), "\(status.stdout)")

        let json = try jqc("--json", "status")
        #expect(json.status == 0, "\(json.stderr)")
        let check = try JSONSchemaCheck.validate("status", json.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let object = try JSONValue(parsing: json.stdout)
        #expect(object["not_on_server"]?["drafts"]?.integerValue == 1)
        #expect(object["not_on_server"]?["server_has_everything"]?.boolValue == false)
        #expect(object["identity"]?["source"]?.stringValue == "config")
        #expect(object["witness"]?.isNull == true)
        #expect(object["service"]?["state"]?.stringValue == "not installed")
    }
}
