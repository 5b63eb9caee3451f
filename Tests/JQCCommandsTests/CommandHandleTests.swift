import ArgumentParsing
import Testing

@testable import JQCCommands

/// Every command reads its arguments by handles its own spec declares (or the
/// globals'), and its errors name options as the user types them.
///
/// A handle the spec does not list throws `UsageError.undeclared` when it is
/// read, on every build; this walk builds each command from many argument
/// lines made from its spec (each option alone, each flag alone, everything
/// at once), so every read in each `init` is reached.
@Suite struct CommandHandleTests {
    /// Values that pass each kind's own check, so the walk gets past it to the
    /// reads after it.
    static func sample(_ name: String) -> String {
        switch name {
        case "N": "2"
        case "K", "TIME|SEQ": "1"
        case "SECONDS": "5"
        case "MODE": "auto"
        case "FORMAT": "json"
        case "DIGEST": "jqc-digest-v1:1:" + String(repeating: "0", count: 64)
        case "URL": "https://jqc.example/api/v1"
        case "SHELL": "bash"
        case "VIEW": "inspections"
        case "ANSWER": "Notes=ok"
        case "SERVER_ID": "5047"
        case "YES|NO": "yes"
        default: "x"
        }
    }

    /// The argument lines the walk builds `type` from.
    static func lines(for type: any RunnableCommand.Type) -> [[String]] {
        let spec = type.spec
        let required = spec.positionals.filter { !$0.isOptional }.map { sample($0.name) }
        let requiredOptions = spec.options.filter(\.isRequired).flatMap { [$0.spelling, sample($0.valueName)] }
        let minimal = type.path + required + requiredOptions
        var lines = [minimal, ["--as", "Dana", "--ledger", "ledger", "--json"] + minimal]
        lines += spec.options.map { minimal + [$0.spelling, sample($0.valueName)] }
        lines += spec.flags.map { minimal + [$0.spelling] }
        lines.append(
            type.path + spec.positionals.map { sample($0.name) }
                + spec.options.flatMap { [$0.spelling, sample($0.valueName)] } + spec.flags.map(\.spelling))
        return lines
    }

    static let commandNames = JQC.commands.map { $0.path.joined(separator: " ") }

    @Test(arguments: commandNames)
    func everyHandleACommandReadsIsDeclared(_ name: String) throws {
        let type = try #require(JQC.commands.first { $0.path.joined(separator: " ") == name })
        var built = 0
        for line in Self.lines(for: type) {
            let outcome = try JQC.program.parse(line)
            guard case .command(let parsed) = outcome else {
                Issue.record("\(line) parsed as \(outcome)")
                continue
            }
            do {
                _ = try type.init(parsed)
                _ = try JQC.Globals(parsed)
                built += 1
            } catch {
                // A refused value is fine here (the reads before it were
                // checked); reading an undeclared handle is not.
                if case .undeclared = error { Issue.record("\(line): \(error.message)") }
            }
        }
        #expect(built > 0, "no argument line built '\(name)', so the walk did not reach the end of its init")
    }

    /// The spellings that had drifted (`digest` beside `--digest`, `server`,
    /// `template`) now come from the handles.
    @Test(
        arguments: [
            (["verify", "--digest", "nope"], "invalid value 'nope' for '--digest'"),
            (["audit", "1", "--digest", "nope"], "invalid value 'nope' for '--digest'"),
            (["init", "--server", "ftp://x"], "invalid value 'ftp://x' for '--server'"),
            (["start", "--facility", "F"], "missing required option '--template TEMPLATE'"),
            (["start", "--template", "T"], "missing required option '--facility FACILITY'"),
            (["start", "--reinspect", "1", "--area", "A"], "unexpected argument '--area'"),
            (
                ["audit", "1", "--no-verify", "--digest", "jqc-digest-v1:1:" + String(repeating: "0", count: 64)],
                "unexpected argument '--digest with --no-verify"
            ),
            (["sync", "--interval", "5"], "unexpected argument '--interval without --watch'"),
        ] as [([String], String)])
    func messagesSpellOptionsAsTyped(_ arguments: [String], _ expected: String) throws {
        let outcome = try JQC.program.parse(arguments)
        guard case .command(let parsed) = outcome else {
            Issue.record("\(arguments) parsed as \(outcome)")
            return
        }
        let type = try #require(JQC.commands.first { $0.path == parsed.path })
        do {
            _ = try type.init(parsed)
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
        }
    }
}
