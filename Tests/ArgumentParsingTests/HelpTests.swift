import ArgumentParsing
import Testing

@Suite struct HelpTests {
    static let spec = SampleProgram.spec

    /// Every command path in the sample, hidden ones included, so each test covers the whole spec.
    static let allPaths: [[String]] = {
        func walk(_ commands: [CommandSpec], _ prefix: [String]) -> [[String]] {
            commands.flatMap { [prefix + [$0.name]] + walk($0.subcommands, prefix + [$0.name]) }
        }
        return [[]] + walk(spec.commands, [])
    }()

    @Test func leafCommandPage() throws {
        let expected = """
            usage: jqc flag ID --severity S --description TEXT [--photo FILE ...]

            Record an issue found during an inspection.

            ARGUMENTS:
              ID                      The inspection.

            OPTIONS:
              -s, --severity S        How serious: minor, major or critical. (required)
                  --description TEXT  What was found. (required)
                  --photo FILE        A photo of the issue. (repeatable)

            GLOBAL OPTIONS:
                  --ledger PATH       The ledger directory to use. (default: ~/.jqc/ledger)
                  --as NAME           Record events as this inspector.
              -h, --help              Show this help.
                  --version           Show the version.
            """
        #expect(try Self.spec.help(for: ["flag"]) == expected)
    }

    @Test func topLevelPageGroupsVisibleCommands() throws {
        let help = try Self.spec.help(for: [])
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "usage: jqc [--ledger PATH] [--as NAME] COMMAND")
        #expect(lines.contains("Record facility inspections in an append-only, verifiable ledger."))
        // Groups appear in the order their first command is declared; ungrouped commands and `help` come last.
        let headings = lines.filter { $0.hasSuffix(":") && !$0.hasPrefix(" ") }
        #expect(
            headings == [
                "LEDGER COMMANDS:", "INSPECTING COMMANDS:", "REVIEWING COMMANDS:", "SYNCING COMMANDS:",
                "OTHER COMMANDS:", "GLOBAL OPTIONS:",
            ])
        for command in Self.spec.commands where !command.isHidden {
            #expect(lines.contains { $0.hasPrefix("  \(command.name) ") && $0.hasSuffix(command.abstract) })
        }
        #expect(!help.contains("debug-dump"))
        #expect(lines.contains { $0.hasPrefix("  help ") })
        #expect(lines.last == "See 'jqc help COMMAND' for more about a command.")
        // The example paragraph of the discussion is kept as written.
        #expect(lines.contains("  jqc flag 42 --severity major --description \"Blocked exit\""))
    }

    @Test func groupPageListsSubcommandsButNotHiddenOnes() throws {
        let help = try Self.spec.help(for: ["templates"])
        #expect(help.hasPrefix("usage: jqc templates SUBCOMMAND\n\nWork with inspection templates.\n"))
        #expect(help.contains("SUBCOMMANDS:\n  show "))
        #expect(!help.contains("dump"))
        #expect(help.hasSuffix("See 'jqc help templates SUBCOMMAND' for more about a subcommand."))
    }

    @Test(arguments: allPaths)
    func pageListsEverythingTheCommandAccepts(_ path: [String]) throws {
        let command = try Self.spec.command(at: path)
        let help = try Self.spec.help(for: path)
        for positional in command.positionals {
            #expect(help.contains("  \(positional.name)"))
            #expect(help.contains(positional.help))
        }
        for option in command.options + Self.spec.globalOptions {
            #expect(help.contains("--\(option.long) \(option.valueName)  "))
            #expect(help.contains(option.help))
            if let short = option.short { #expect(help.contains("-\(short), --\(option.long)")) }
        }
        for flag in command.flags + Self.spec.globalFlags {
            #expect(help.contains("--\(flag.long)  "))
            #expect(help.contains(flag.help))
        }
        for builtIn in ["-h, --help", "--version"] {
            #expect(help.contains(builtIn))
        }
        for subcommand in command.subcommands {
            #expect(help.contains("  \(subcommand.name)  ") != subcommand.isHidden)
        }
        #expect(help.hasPrefix("usage: " + (try Self.spec.usage(for: path)).prefix(20)))
    }

    @Test(arguments: allPaths, [30, 40, 60, 80, 100])
    func everyLineFitsTheWidth(_ path: [String], _ width: Int) throws {
        let help = try Self.spec.help(for: path, width: width)
        // Indented example lines of a discussion are kept as written, whatever the width.
        let examples = try Self.spec.command(at: path).discussion?.split(separator: "\n").filter { $0.hasPrefix(" ") }
        for line in help.split(separator: "\n") where !(examples ?? []).contains(line) {
            #expect(line.count <= width, "\(line.count) > \(width): \(line)")
            #expect(!line.hasSuffix(" "), "trailing space: '\(line)'")
        }
    }

    @Test func narrowWidthWrapsUsageAndDescriptionsWithoutLosingWords() throws {
        let wide = try Self.spec.help(for: ["log"], width: 200)
        let narrow = try Self.spec.help(for: ["log"], width: 40)
        #expect(narrow.split(separator: "\n").count > wide.split(separator: "\n").count)
        #expect(narrow.split(whereSeparator: \.isWhitespace) == wide.split(whereSeparator: \.isWhitespace))
        let usageLines = narrow.split(separator: "\n").prefix { !$0.isEmpty && !$0.hasPrefix("List") }
        #expect(usageLines.count > 1)
        // Continuation lines of the usage hang under the first argument, and no bracketed unit is split.
        for line in usageLines.dropFirst() {
            #expect(line.hasPrefix(String(repeating: " ", count: "usage: jqc log ".count) + "["))
            #expect(line.filter { $0 == "[" }.count == line.filter { $0 == "]" }.count)
        }
    }

    @Test func labelsLongerThanTheColumnGetTheirOwnLine() throws {
        let narrow = try Self.spec.help(for: ["log"], width: 40)
        let lines = narrow.split(separator: "\n").map(String.init)
        let label = try #require(lines.firstIndex(of: "      --ledger PATH"))
        #expect(lines[label + 1].trimmingLeadingSpaces.hasPrefix("The ledger"))
    }

    @Test(arguments: [
        ([] as [String], "jqc [--ledger PATH] [--as NAME] COMMAND"),
        (["init"], "jqc init [--server URL]"),
        (["start"], "jqc start --template T --facility F [--area A] [--reinspect ID]"),
        (["set"], "jqc set ID FIELD VALUE"),
        (["photo"], "jqc photo [ID] [FIELD] FILE [--issue ISSUE]"),
        (["show"], "jqc show ID [--json]"),
        (["submit"], "jqc submit ID [--follow-up] [--quiet]"),
        (["templates"], "jqc templates SUBCOMMAND"),
        (["templates", "show"], "jqc templates show ID"),
        (["rebuild"], "jqc rebuild [PROJECTION]"),
        (["paths"], "jqc paths FILE... DEST"),
    ])
    func usageLines(_ path: [String], _ expected: String) throws {
        #expect(try Self.spec.usage(for: path) == expected)
    }

    @Test func helpForAnUnknownPathIsAUsageError() throws {
        #expect(throws: UsageError.self) { try Self.spec.help(for: ["templates", "shwo"]) }
        do {
            _ = try Self.spec.help(for: ["templates", "shwo"])
        } catch {
            #expect(error.message.contains("Did you mean 'show'?"))
            #expect(error.context.path == ["templates"])
        }
    }

    @Test func discussionParagraphsAreReflowedSeparately() throws {
        let spec = ProgramSpec(
            "tool", abstract: "A tool.",
            commands: [
                CommandSpec(
                    "run", abstract: "Run it.",
                    discussion: """
                        First paragraph is long enough that it has to wrap onto a second line at this width.

                        Second
                        paragraph.
                        """)
            ])
        let help = try spec.help(for: ["run"], width: 40)
        #expect(
            help.contains(
                """
                First paragraph is long enough that it
                has to wrap onto a second line at this
                width.

                Second paragraph.
                """))
    }
}

extension String {
    fileprivate var trimmingLeadingSpaces: Substring { drop { $0 == " " } }
}
