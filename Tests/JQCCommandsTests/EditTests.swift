import Foundation
import LedgerTestSupport
import Testing

/// `jqc edit` with a scripted editor: a shell script as EDITOR that edits the
/// document the way a person would, differently on each opening.
@Suite struct EditTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        try jqc.initWithSampleReference()
    }

    func start(_ template: String) throws -> String { try jqc.startInspection(template) }

    /// An editor that, on its Nth opening, keeps a copy of what it was given
    /// (`seen-N.txt`) and runs the Nth sed script on the file.
    func editor(_ scripts: [String]) throws -> String {
        var body = """
            #!/bin/sh
            n=$(cat "\(directory.path)/count" 2>/dev/null || echo 0)
            n=$((n + 1))
            echo "$n" > "\(directory.path)/count"
            cp "$1" "\(directory.path)/seen-$n.txt"
            case "$n" in

            """
        for (i, script) in scripts.enumerated() {
            body += "\(i + 1)) sed -i -e '\(script)' \"$1\" ;;\n"
        }
        body += "esac\n"
        let path = directory.appending("editor.sh")
        try Data(body.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    func seen(_ n: Int) throws -> String {
        String(
            decoding: try Data(contentsOf: URL(fileURLWithPath: directory.appending("seen-\(n).txt"))), as: UTF8.self)
    }

    func values(_ id: String) throws -> [String: Any] {
        let result = try jqc("show", id, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let fields = try #require(object["fields"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: fields.map { ($0["id"] as! String, $0["value"] as Any) })
    }

    func events() throws -> Int {
        let stats = try JSONSerialization.jsonObject(with: Data(try jqc("stats", "--json").stdout.utf8))
        return try #require((stats as? [String: Any])?["events"] as? Int)
    }

    @Test func everyTypeEditedOnlyChangedAnswersRecorded() throws {
        let id = try start("Office Area QC")
        #expect(try jqc("--as", "Dana", "set", id, "2=Kim", "8=2", "13=yes").status == 0)
        let before = try events()
        let edits = [
            #"s/^\[3\] Supervisor email = .*/[3] Supervisor email = kim@example.com/"#,
            #"s/^\[4\] Last deep clean = .*/[4] Last deep clean = 2026-11-02/"#,
            #"s/^\[5\] Occupants present = .*/[5] Occupants present = 12.5/"#,
            #"s/^\[6\] Shift = .*/[6] Shift = evening/"#,
            #"s/^\[7\] Areas covered = .*/[7] Areas covered = Lobby, Desks/"#,
            #"s/^\[9\] Vacuuming = .*/[9] Vacuuming = 5/"#,
            #"s/^\[10\] Kitchenette sanitized = .*/[10] Kitchenette sanitized = fail/"#,
            #"s/^\[11\] Glass and mirrors = .*/[11] Glass and mirrors = N\/A/"#,
            #"s/^\[12\] Supplies counted = .*/[12] Supplies counted = Soap,4,no/"#,
            #"s/^\[8\] Dusting = .*/[8] Dusting = /"#,
        ].joined(separator: "\n")
        let result = try jqc.run(["--as", "Dana", "edit", id], environmentOverride: ["EDITOR": try editor([edits])])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try seen(1)
        #expect(document.contains("[2] Supervisor on site = Kim\n"))
        #expect(document.contains("# select; options: Day | Evening | Night\n[6] Shift = \n"))
        #expect(document.contains("capture with 'jqc sign \(id.prefix(8)) 14 FILE'"))
        // Nine answers changed, one cleared; "Kim" and the checkbox untouched.
        #expect(try events() == before + 10)
        let values = try values(id)
        #expect(values["2"] as? String == "Kim")
        #expect(values["3"] as? String == "kim@example.com")
        #expect(values["4"] as? String == "2026-11-02")
        #expect((values["5"] as? NSNumber)?.doubleValue == 12.5)
        #expect(values["6"] as? String == "Evening")
        #expect(values["7"] as? [String] == ["Desks", "Lobby"])
        #expect(values["8"] is NSNull)
        #expect(values["9"] as? Int == 5)
        #expect(values["10"] as? String == "fail")
        #expect(values["11"] as? String == "N/A")
        #expect(values["12"] as? [[String]] == [["Soap", "4", "no"]])
        #expect(values["13"] as? Bool == true)
    }

    @Test func aRefusalReopensTheEditorWithTheReasonsThenTheCorrectionIsRecorded() throws {
        let id = try start("Restroom QC")
        let before = try events()
        let first = #"s/^\[2\] Floors = .*/[2] Floors = 9/; s/^\[9\] Notes = .*/[9] Notes = Stall 3/"#
        let second = #"s/^\[2\] Floors = 9/[2] Floors = 4/"#
        let result = try jqc.run(
            ["--as", "Dana", "edit", id], environmentOverride: ["VISUAL": try editor([first, second])])
        #expect(result.status == 0, "\(result.stderr)")
        let reopened = try seen(2)
        #expect(reopened.hasPrefix("# refused: field 2 \"Floors\" (rating) refuses \"9\""), "\(reopened)")
        #expect(reopened.contains("[9] Notes = Stall 3\n"), "the edits are kept for correcting")
        #expect(try events() == before + 2)
        let values = try values(id)
        #expect(values["2"] as? Int == 4)
        #expect(values["9"] as? String == "Stall 3")
    }

    @Test func savingUnchangedAfterARefusalStopsAndRecordsNothing() throws {
        let id = try start("Restroom QC")
        let before = try events()
        let result = try jqc.run(
            ["--as", "Dana", "edit", id],
            environmentOverride: [
                "EDITOR": try editor([
                    #"s/^\[5\] Soap dispensers stocked = .*/[5] Soap dispensers stocked = maybe/"#, "s/x/x/",
                ])
            ])
        #expect(result.status == 1)
        #expect(result.errorKind == "EditError.abandoned", "\(result.stderr)")
        #expect(try events() == before)
    }

    @Test func aFailingEditorRecordsNothing() throws {
        let id = try start("Restroom QC")
        let result = try jqc.run(["--as", "Dana", "edit", id], environmentOverride: ["EDITOR": "false"])
        #expect(result.status == 1)
        #expect(result.errorKind == "EditError.editorFailed", "\(result.stderr)")
    }
}
