/// What may come next on a command line being typed, worked out from the
/// specs alone, so shell completion offers exactly what the parser accepts.
public enum CompletionRequest: Equatable, Sendable {
    /// Fixed words: command names, option spellings.
    case words([String])
    /// A value the program itself knows: `name` is the positional's name
    /// (`ID`, `FIELD`) or the option's value name (`TEMPLATE`); `command` the
    /// command path; `positionals` the positional values typed before it.
    case value(name: String, command: [String], positionals: [String])
}

extension ProgramSpec {
    /// The candidates for the last of `words` (the word being typed, maybe
    /// empty), given the words before it (without the program name).
    public func completion(for words: [String]) -> [CompletionRequest] {
        let typed = words.dropLast()
        let current = words.last ?? ""
        var level = commands
        var path: [String] = []
        var command: CommandSpec?
        var positionals: [String] = []
        var pendingValue: String?
        var afterDashes = false
        for word in typed {
            if pendingValue != nil {
                // The value of the option before: not a command or positional.
                pendingValue = nil
                continue
            }
            if !afterDashes && word == "--" {
                afterDashes = true
                continue
            }
            if !afterDashes && word.hasPrefix("-") && word.count > 1 {
                if !word.contains("="), let option = self.option(spelled: word, in: command) {
                    pendingValue = option.valueName
                }
                continue
            }
            if positionals.isEmpty, let next = level.first(where: { $0.name == word && !$0.isHidden }) {
                command = next
                path.append(word)
                level = next.subcommands
                continue
            }
            if command == nil && path.isEmpty && word == BuiltIn.helpCommand {
                path.append(word)
                command = CommandSpec(BuiltIn.helpCommand, abstract: "")
                level = commands
                continue
            }
            positionals.append(word)
        }
        if let valueName = pendingValue {
            return [.value(name: valueName, command: path, positionals: positionals)]
        }
        if !afterDashes && current.hasPrefix("-") {
            var spellings: [String] = []
            for option in (command?.options ?? []) + globalOptions { spellings.append("--\(option.long)") }
            for flag in (command?.flags ?? []) + globalFlags { spellings.append("--\(flag.long)") }
            spellings.append("--\(BuiltIn.helpLong)")
            if command == nil, version != nil { spellings.append("--\(BuiltIn.versionLong)") }
            return [.words(spellings)]
        }
        var requests: [CompletionRequest] = []
        if positionals.isEmpty {
            let names = level.filter { !$0.isHidden }.map(\.name)
            if command == nil {
                requests.append(.words(names + [BuiltIn.helpCommand]))
            } else if path.first == BuiltIn.helpCommand {
                requests.append(.words(names))
                return requests
            } else if !names.isEmpty {
                requests.append(.words(names))
            }
        }
        if let command {
            let slots = command.positionals
            if let slot = positionals.count < slots.count ? slots[positionals.count] : slots.last(where: \.isVariadic) {
                requests.append(.value(name: slot.name, command: path, positionals: positionals))
            }
        }
        return requests
    }

    /// The option `word` spells (`--template`, `--template=…`, `-t`), for the
    /// command or the program.
    private func option(spelled word: String, in command: CommandSpec?) -> OptionSpec? {
        let options = (command?.options ?? []) + globalOptions
        if word.hasPrefix("--") {
            let name = word.dropFirst(2)
            return options.first { $0.long == name }
        }
        guard word.count == 2, let short = word.last else { return nil }
        return options.first { $0.short == short }
    }
}

extension ProgramSpec {
    /// The lines `PROGRAM __complete WORDS…` prints for the last of `words`
    /// (maybe empty): every candidate that extends it (in any case), each
    /// once, in order; or the one line `:files` when `values` answers it for
    /// a value (a file name, which the shell completes itself). `values`
    /// answers the candidates of a value by its name, command path and the
    /// positionals typed before it.
    public func completionLines(
        for words: [String], values: (_ name: String, _ command: [String], _ positionals: [String]) -> [String]
    ) -> [String] {
        let words = words.isEmpty ? [""] : words
        let current = words.last ?? ""
        var candidates: [String] = []
        for request in completion(for: words) {
            switch request {
            case .words(let list): candidates += list
            case .value(let name, let command, let positionals):
                let offered = values(name, command, positionals)
                if offered == [":files"] { return offered }
                candidates += offered
            }
        }
        var seen: Set<String> = []
        return candidates.filter { candidate in
            (candidate.hasPrefix(current) || candidate.lowercased().hasPrefix(current.lowercased()))
                && seen.insert(candidate).inserted
        }
    }
}
