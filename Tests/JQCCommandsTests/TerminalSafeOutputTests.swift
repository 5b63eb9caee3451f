import Foundation
import LedgerTestSupport
import Testing

@testable import JQCCommands

/// Text a person wrote (a `--as` name, a description, a field value) is shown
/// by every text command with its control characters as visible escapes, so
/// it cannot erase a line, return the cursor or hide what follows; JSON
/// output keeps it exact.
@Suite struct TerminalSafeOutputTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    /// Erases the line, returns the cursor and writes another name over it.
    static let forger = "Mallory\u{1B}[2K\rDana Inspector"
    static let forgerShown = #"Mallory\u{1B}[2K\u{D}Dana Inspector"#
    /// Makes what follows invisible on most terminals.
    static let hidden = "Leaking tap\u{1B}[8m (ignore this)"
    static let note = "Fine\u{202E}enod ton"
    let id: String

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try Self.succeed(jqc("init"))
        try Self.succeed(jqc("pull", "--from", SampleReference.path))
        let started = try Self.succeed(
            jqc.run([
                "--as", Self.forger, "--json", "start", "--template", "Restroom QC", "--facility",
                "Riverside Medical Center",
            ]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any])
        id = try #require(object["id"] as? String)
        try Self.succeed(jqc.run(["--as", Self.forger, "set", id, "Notes", Self.note]))
        try Self.succeed(
            jqc.run(["--as", Self.forger, "flag", id, "--severity", "high", "--description", Self.hidden]))
    }

    @discardableResult
    static func succeed(_ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        #expect(result.status == 0, "jqc failed: \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    /// No escape, carriage return or bidi override reaches the terminal.
    static func expectNoControls(_ text: String, _ command: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let raw = text.unicodeScalars.filter { $0.value == 0x1B || $0.value == 0x0D || $0.value == 0x202E }
        #expect(raw.isEmpty, "jqc \(command) printed raw control characters", sourceLocation: sourceLocation)
    }

    @Test(arguments: [["log"], ["audit"], ["show"], ["issues"], ["inspections"], ["drafts"]])
    func textOutputShowsControlCharactersAsEscapes(command: [String]) throws {
        let arguments = command + (["audit", "show"].contains(command[0]) ? [String(id.prefix(8))] : [])
        let result = try jqc.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        Self.expectNoControls(result.stdout, command[0])
        switch command[0] {
        case "log", "audit", "show":
            #expect(result.stdout.contains(Self.forgerShown), "the forged name is not shown as escapes")
            #expect(result.stdout.contains(#"\u{202E}"#) || result.stdout.contains(#"\u202e"#))
        case "issues":
            #expect(result.stdout.contains(#"Leaking tap\u{1B}[8m (ignore this)"#))
        default:
            break
        }
        if command[0] != "inspections" && command[0] != "drafts" {
            #expect(result.stdout.contains("[8m"), "the hidden text marker is not shown")
        }
    }

    @Test func jsonOutputKeepsTheTextExact() throws {
        let show = try Self.succeed(jqc.run(["--json", "show", id]))
        let form = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        #expect(form["started_by"] as? String == Self.forger)
        let issues = try #require(form["issues"] as? [[String: Any]])
        #expect(issues.first?["description"] as? String == Self.hidden)
        let fields = try #require(form["fields"] as? [[String: Any]])
        #expect(fields.first { $0["label"] as? String == "Notes" }?["value"] as? String == Self.note)

        let log = try Self.succeed(jqc.run(["--json", "log"]))
        let first = try #require(log.stdout.split(separator: "\n").first)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect((event["actor"] as? [String: Any])?["name"] as? String == Self.forger)
    }

    /// A C1 CSI, a bidi override and its pop, and a line separator in a
    /// recorded answer: every JSON output writes them as `\uXXXX` (as text
    /// output shows them as escapes), and the JSON still reads back exact.
    static let terminalActive = "x\u{9B}2Jy\u{202E}evil\u{202C}\u{2028}z\u{61C}\u{2066}\u{85}"

    @Test(arguments: [["--json", "show"], ["--json", "log"], ["audit", "--format", "json"]])
    func jsonOutputEscapesWhatATerminalActsOn(command: [String]) throws {
        try Self.succeed(jqc.run(["--as", "Dana", "set", id, "Notes=\(Self.terminalActive)"]))
        let arguments = command + (command[1] == "log" ? [] : [id])
        let result = try Self.succeed(jqc.run(arguments))
        let raw = result.stdout.unicodeScalars.filter {
            (0x80...0x9F).contains($0.value) || [0x061C, 0x2028, 0x2029, 0x202C, 0x202E, 0x2066].contains($0.value)
        }
        #expect(
            raw.isEmpty, "jqc \(arguments.joined(separator: " ")) printed \(raw.map { String($0.value, radix: 16) })")
        #expect(result.stdout.contains(#"x\u009b2Jy\u202eevil\u202c\u2028z\u061c\u2066\u0085"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"\u202e"#))
        let lines = command[1] == "log" ? result.stdout.split(separator: "\n").map(String.init) : [result.stdout]
        let parsed = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) }
        #expect(parsed.contains { Self.holds($0, Self.terminalActive) }, "the JSON does not read back exact")
    }

    /// Whether `json` (parsed by Foundation) holds the string `text` at any depth.
    static func holds(_ json: Any, _ text: String) -> Bool {
        switch json {
        case let string as String: string == text
        case let array as [Any]: array.contains { holds($0, text) }
        case let object as [String: Any]: object.values.contains { holds($0, text) }
        default: false
        }
    }

    @Test(arguments: [" ", "   ", "\t\n", "\u{200B}", "\u{202E}"])
    func aNameWithoutAVisibleCharacterIsRefused(name: String) throws {
        let result = try jqc.run(["--as", name, "set", id, "Notes", "x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("a name needs at least one visible character"), "\(result.stderr)")
    }

    /// The white space trimmed from `--as` is Foundation's
    /// `whitespacesAndNewlines`, scalar by scalar, over the whole plane
    /// where that set has members.
    @Test func aNameIsTrimmedOfFoundationsWhiteSpace() {
        let foundation = CharacterSet.whitespacesAndNewlines
        let differing = (UInt32(0)...0xFFFF).compactMap(Unicode.Scalar.init).filter {
            ActorName.isTrimmed($0) != foundation.contains($0)
        }
        #expect(differing.isEmpty, "\(differing.map { String($0.value, radix: 16) })")
        #expect(ActorName.isTrimmed("\u{3000}") && ActorName.isTrimmed("\u{85}") && ActorName.isTrimmed("\u{200B}"))
        #expect(!ActorName.isTrimmed("\u{FEFF}") && !ActorName.isTrimmed("D"))
    }

    @Test func aNameIsTrimmed() throws {
        let started = try Self.succeed(
            jqc.run([
                "--as", "\u{3000} \u{200B}Dana \n\t", "--json", "start", "--template", "Restroom QC", "--facility",
                "Riverside Medical Center",
            ]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any])
        let other = try #require(object["id"] as? String)
        let show = try Self.succeed(jqc.run(["--json", "show", other]))
        let form = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        #expect(form["started_by"] as? String == "Dana")
    }
}
