import InspectionDomain

/// How `jqc` says that a command failed: `jqc: MESSAGE` on standard error
/// (and the usage line after a usage error), then, when the environment holds
/// `JQC_ERRORS=json`, one more line for scripts:
/// `{"error":{"kind":"Type.case","message":"MESSAGE"}}`, with a `"detail"`
/// object after the message when the error names facts a script needs
/// (``ErrorDetailing``: a refused sender's key ids, a fork's checkpoints).
///
/// The rule is the environment, not `--json`: a script sets it once for every
/// command, a usage error happens before `--json` is read, and `--json`'s
/// output on standard error stays what it was.
struct FailureReport {
    /// The variable, and the value that asks for the JSON line.
    static let variable = "JQC_ERRORS"
    static let json = "json"

    let stderr: TextOutput
    let asJSON: Bool

    init(stderr: TextOutput, environment: [String: String]) {
        self.stderr = stderr
        asJSON = environment[Self.variable] == Self.json
    }

    /// Prints the failure: `message` as the person reads it, then `usage`, then the JSON line.
    func say(_ message: String, kind: ErrorKind, usage: String? = nil, detail: [JSONValue.Member] = []) {
        stderr.line("jqc: \(message)")
        if let usage { stderr.line("usage: \(usage)") }
        guard asJSON else { return }
        var members: [JSONValue.Member] = [.init("kind", .string(kind.name)), .init("message", .string(message))]
        if !detail.isEmpty { members.append(.init("detail", .object(detail))) }
        let error = JSONValue.object(members)
        stderr.line(JSONValue.object([.init("error", error)]).serialized())
    }
}
