import Foundation
import LedgerTestSupport
import Testing

/// Shell completion (`jqc completion`, `jqc __complete`) and the manual page,
/// loaded in the real shells and `man`.
@Suite struct CompletionTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    /// PATH with the built `jqc` first, as an installed one would be.
    let path: String

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try jqc.initWithSampleReference()
        let binary = URL(fileURLWithPath: Products.executable("jqc")).deletingLastPathComponent().path
        path = binary + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    }

    func start(_ template: String) throws -> String { try jqc.startInspection(template) }

    func candidates(_ words: String...) throws -> [String] {
        let result = try jqc.run(["__complete"] + words)
        #expect(result.status == 0)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    func shell(_ shell: String, _ script: String) throws -> ProcessResult {
        try ProcessRun.run(
            "/usr/bin/env", [shell, "-c", script], environment: jqc.environment.merging(["PATH": path]) { $1 },
            currentDirectory: directory.path, timeout: 60)
    }

    @Test func candidatesComeFromTheSpecsAndTheLedger() throws {
        let submitted = try start("Restroom QC")
        #expect(try jqc("--as", "Dana", "set", submitted, "2=4", "3=4", "5=pass").status == 0)
        #expect(try jqc("--as", "Dana", "submit", submitted).status == 0)
        let draft = try start("Restroom QC")

        #expect(try candidates("sta") == ["start", "status", "stats"])
        #expect(try candidates("templates", "") == ["show"])
        #expect(try candidates("set", "") == [String(draft.prefix(8)), String(submitted.prefix(8))], "drafts first")
        #expect(try candidates("set", String(draft.prefix(4)), "Soap").first == "Soap dispensers stocked=")
        #expect(try candidates("set", draft, "Odor=") == ["Odor=Good", "Odor=Acceptable", "Odor=Poor"])
        #expect(try candidates("sign", draft, "") == ["Inspector signature", "11"])
        #expect(try candidates("photo", draft, "10", "") == [":files"])
        #expect(try candidates("start", "--template", "") == ["Restroom QC", "11", "Office Area QC", "22"])
        #expect(try candidates("start", "-f", "Riv") == ["Riverside Medical Center"])
        #expect(try candidates("flag", draft, "--severity", "") == ["low", "medium", "high", "critical"])
        #expect(try candidates("flag", draft, "--sev") == ["--severity"])
        #expect(try candidates("completion", "") == ["bash", "zsh", "fish"])
        #expect(try candidates("help", "fi") == ["fill"])
        #expect(!(try candidates("")).contains("__complete"))
    }

    @Test func theBashScriptLoadsAndCompletes() throws {
        let draft = try start("Restroom QC")
        let result = try shell(
            "bash",
            """
            source <(jqc completion bash) || exit 9
            complete -p jqc
            COMP_WORDS=(jqc sta); COMP_CWORD=1; _jqc; printf 'commands:%s\\n' "${COMPREPLY[@]}"
            COMP_WORDS=(jqc set \(draft.prefix(6)) Flo); COMP_CWORD=3; _jqc; printf 'field:%s\\n' "${COMPREPLY[@]}"
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("-F _jqc") && result.stdout.contains(" jqc\n"), "\(result.stdout)")
        #expect(result.stdout.contains("commands:start\ncommands:status\ncommands:stats\n"))
        #expect(result.stdout.contains("field:Floors="))
    }

    @Test func theZshScriptLoadsWithCompinit() throws {
        let result = try shell(
            "zsh",
            """
            autoload -U compinit && compinit -u -d "$PWD/zcompdump" || exit 8
            source <(jqc completion zsh) || exit 9
            print -r -- "registered:$_comps[jqc]"
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("registered:_jqc"), "\(result.stdout) \(result.stderr)")
    }

    @Test func theFishScriptLoadsAndCompletes() throws {
        let draft = try start("Restroom QC")
        let result = try shell(
            "fish",
            """
            set -x HOME $PWD
            jqc completion fish | source; or exit 9
            complete -C 'jqc sta'
            complete -C 'jqc set \(draft.prefix(6)) Odor='
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("start\n") && result.stdout.contains("stats\n"), "\(result.stdout)")
        #expect(result.stdout.contains("Odor=Acceptable"))
    }

    @Test func theManualPageRendersEveryCommandWithoutWarnings() throws {
        let page = try jqc.run(["__manpage"], environmentOverride: ["SOURCE_DATE_EPOCH": "1764547200"])
        #expect(page.status == 0)
        #expect(page.stdout.hasPrefix(#".TH "JQC" 1 "2025\-12\-01""#), "\(page.stdout.prefix(80))")
        let file = directory.appending("jqc.1")
        try Data(page.stdout.utf8).write(to: URL(fileURLWithPath: file))
        let rendered = try ProcessRun.run(
            "/usr/bin/env", ["man", "--warnings", "-E", "UTF-8", "-l", file],
            environment: ["MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat"], timeout: 60)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(rendered.stderr.isEmpty, "man warned: \(rendered.stderr)")
        let text = rendered.stdout.replacingOccurrences(of: "\u{2010}", with: "-")
        for command in ["jqc set ID [ANSWER...] [--from FILE]", "jqc fill ID", "jqc edit ID", "jqc templates show"] {
            #expect(text.contains(command), "\(command) missing from the manual")
        }
        #expect(text.contains("--follow-up"))
        #expect(text.contains("EXIT STATUS"))
    }
}
