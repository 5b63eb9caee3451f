import ArgumentParsing
import InspectionAudit
import LedgerCore

/// Values of `jqc`'s own kinds read from an option, with the same usage
/// errors (spelled from the handle) wherever the kind is accepted.
extension ParsedCommand {
    /// A `TIME|SEQ` option (`--since`, `--as-of`), or nil when it was not given.
    func moment(of option: OptionSpec) throws(UsageError) -> LogMoment? {
        guard let text = try value(of: option) else { return nil }
        guard let moment = LogMoment(parsing: text) else {
            throw invalid(option, value: text, reason: LogMoment.expectation)
        }
        return moment
    }

    /// A `DIGEST` option (from `jqc digest`), or nil when it was not given.
    func digest(of option: OptionSpec) throws(UsageError) -> LedgerDigest? {
        guard let text = try value(of: option) else { return nil }
        guard let digest = LedgerDigest(text) else {
            throw invalid(option, value: text, reason: "expected jqc-digest-v1:<position>:<64 hex digits>")
        }
        return digest
    }
}
