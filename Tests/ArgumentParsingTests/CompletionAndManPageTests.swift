import Testing

@testable import ArgumentParsing

/// What completion offers after a half-typed line, and the manual page, both
/// from the sample spec.
@Suite struct CompletionAndManPageTests {
    static let cases: [(words: [String], expected: [CompletionRequest])] = [
        ([""], [.words(["init", "start", "set", "photo", "flag"])]),
        (["set", ""], [.value(name: "ID", command: ["set"], positionals: [])]),
        (["set", "3f", ""], [.value(name: "FIELD", command: ["set"], positionals: ["3f"])]),
        (["--ledger", "/tmp/l", "set", "3f", "Fl"], [.value(name: "FIELD", command: ["set"], positionals: ["3f"])]),
        (["start", "-t", ""], [.value(name: "T", command: ["start"], positionals: [])]),
        (["start", "--facility", "F-12", "--template", ""], [.value(name: "T", command: ["start"], positionals: [])]),
        (["flag", "42", "--s"], [.words(["--severity", "--description", "--photo", "--ledger", "--as", "--help"])]),
        (["photo", "--issue", "9", ""], [.value(name: "ID", command: ["photo"], positionals: [])]),
        (["help", ""], [.words(["init", "start", "set", "photo", "flag"])]),
    ]

    @Test(arguments: cases) func offersWhatTheParserAccepts(words: [String], expected: [CompletionRequest]) {
        var got = SampleProgram.spec.completion(for: words)
        // Only the commands the cases name; the sample has more.
        got = got.map { request in
            guard case .words(let list) = request, !(words.last ?? "").hasPrefix("-") else { return request }
            return .words(list.filter { ["init", "start", "set", "photo", "flag"].contains($0) })
        }
        #expect(got == expected)
    }

    @Test func theManPageEscapesRoffAndListsEveryCommand() {
        var spec = SampleProgram.spec
        spec.commands.append(
            CommandSpec(
                "odd", abstract: ".starts with a dot, has a \\ backslash and \"quotes\"",
                discussion: "'quoted first\n\n  an example -x\n  kept as written"))
        let page = spec.manPage(date: "2026-12-01")
        #expect(page.hasPrefix(#".TH "JQC" 1 "2026\-12\-01" "jqc 1.2.0" "User Commands""#))
        #expect(page.contains("\\&.starts with a dot, has a \\e backslash"))
        #expect(page.contains("\\&'quoted first"))
        #expect(page.contains(".nf\n  an example \\-x\n  kept as written\n.fi"))
        for command in spec.commands where !command.isHidden {
            #expect(page.contains(".SS \"\(command.name)\""), "\(command.name) missing")
        }
        #expect(page.contains(".B \\-t, \\-\\-template \\fIT\\fR"))
        // No line may start with a dot that is not a request this renderer writes.
        let requests = [".TH", ".SH", ".SS", ".PP", ".TP", ".B", ".I", ".nf", ".fi"]
        for line in page.split(separator: "\n") where line.hasPrefix(".") {
            #expect(requests.contains { line == $0 || line.hasPrefix($0 + " ") }, "stray request: \(line)")
        }
    }
}
