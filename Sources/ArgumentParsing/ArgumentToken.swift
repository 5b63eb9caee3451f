/// One command-line argument classified by its shape alone, before anything is known about the command.
///
/// Splitting first keeps the rules for dashes, `=` and `--` in one small, separately testable place, so the
/// parser only has to decide what each shape means for the command at hand.
public enum ArgumentToken: Sendable, Hashable {
    /// `--name`, or `--name=value` when the value is attached (which is how a value starting with `-` is given).
    case long(name: String, value: String?)
    /// `-x`, or bundled one-letter flags `-abc`.
    case short([Character])
    /// Anything else: a command word, a positional, or an option's value. A lone `-` (stdin, by convention) and
    /// negative numbers such as `-3` are values, and so is every argument after `--`.
    case value(String)
    /// `--`, after which nothing is read as an option.
    case terminator

    /// Classifies each argument (without the program name). Only the first `--` is a terminator; later ones are
    /// ordinary values.
    public static func split(_ arguments: [String]) -> [ArgumentToken] {
        var tokens: [ArgumentToken] = []
        tokens.reserveCapacity(arguments.count)
        var afterTerminator = false
        for argument in arguments {
            if afterTerminator {
                tokens.append(.value(argument))
            } else if argument == "--" {
                afterTerminator = true
                tokens.append(.terminator)
            } else {
                tokens.append(classify(argument))
            }
        }
        return tokens
    }

    private static func classify(_ argument: String) -> ArgumentToken {
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                return .long(name: String(body[..<equals]), value: String(body[body.index(after: equals)...]))
            }
            return .long(name: String(body), value: nil)
        }
        if argument.hasPrefix("-") {
            let letters = argument.dropFirst()
            // A lone "-" means stdin, and "-3" is far more likely a number than a bundle of digit flags (digits
            // are not allowed as short names), so both stay values.
            guard let first = letters.first, !first.isWholeNumber, first != "." else {
                return .value(argument)
            }
            return .short(Array(letters))
        }
        return .value(argument)
    }

    /// The token as the user typed it, for quoting in error messages.
    public var text: String {
        switch self {
        case .long(let name, let value):
            if let value { return "--\(name)=\(value)" }
            return "--\(name)"
        case .short(let letters):
            return "-" + String(letters)
        case .value(let value):
            return value
        case .terminator:
            return "--"
        }
    }
}
