import Foundation

/// Runs the built `jqc` binary against one ledger directory, as a user would.
public struct JQCRunner: Sendable {
    public let ledger: String
    public var environment: [String: String]

    public init(ledger: String, environment: [String: String] = [:]) {
        self.ledger = ledger
        // No colour and no inherited ledger location: each test owns its ledger.
        self.environment = ["NO_COLOR": "1", "JQC_HOME": ledger].merging(environment) { $1 }
    }

    /// Runs `jqc ARGUMENTS` and returns its exit status and output.
    @discardableResult
    public func callAsFunction(_ arguments: String..., input: Data? = nil) throws -> ProcessResult {
        try run(arguments, input: input)
    }

    public func run(
        _ arguments: [String], input: Data? = nil, environmentOverride: [String: String] = [:]
    ) throws -> ProcessResult {
        try ProcessRun.run(
            Products.executable("jqc"), arguments, environment: environment.merging(environmentOverride) { $1 },
            input: input)
    }
}

/// How a test of the built `jqc` sets up a ledger of its own, written once.
extension JQCRunner {
    /// A set-up step of a test (`init`, `pull`, reading the config) that did
    /// not succeed, with what jqc said or what was missing.
    public struct SetUpFailed: Error, CustomStringConvertible {
        public var description: String
    }

    /// A runner on a new ledger `name` in `directory` (`JQC_AS_TEST` set):
    /// `jqc init`, then the sample reference data pulled; throws
    /// `SetUpFailed` when either does not succeed.
    public static func pulled(in directory: TemporaryDirectory, name: String) throws -> JQCRunner {
        let jqc = JQCRunner(ledger: directory.appending(name), environment: ["JQC_AS_TEST": "1"])
        for step in [["init"], ["pull", "--from", SampleReference.path]] {
            let result = try jqc.run(step)
            guard result.status == 0, !result.signalled else {
                throw SetUpFailed(
                    description: "jqc \(step.joined(separator: " ")) failed (status \(result.status)): "
                        + result.stdout + result.stderr)
            }
        }
        return jqc
    }

    /// The ledger's device id as its `config.json` records it, lowercased.
    public var deviceID: String {
        get throws {
            let file = ledger + "/config.json"
            let config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
            guard let id = (config as? [String: Any])?["device_id"] as? String else {
                throw SetUpFailed(description: "\(file) has no device_id: is it a ledger made by jqc init?")
            }
            return id.lowercased()
        }
    }
}

/// Failures by kind: the JSON line `jqc` adds to standard error under `JQC_ERRORS=json`.
extension JQCRunner {
    /// This runner with `JQC_ERRORS=json` set, so that a failed run's ``ProcessResult/errorKind`` is known.
    public var reportingKinds: JQCRunner {
        var runner = self
        runner.environment["JQC_ERRORS"] = "json"
        return runner
    }
}

extension ProcessResult {
    /// The failure's kind (`DomainError.unknownField`) from the last `{"error":…}` line on
    /// standard error, or nil when there is none (a success, or a run without `JQC_ERRORS=json`).
    public var errorKind: String? { errorMember("kind") }

    /// The failure's message as the JSON line gives it (the text after `jqc: `).
    public var errorMessage: String? { errorMember("message") }

    /// The facts the failure names for scripts (the JSON line's `detail`:
    /// a refused sender's key ids, a fork's checkpoints), or nil when it has none.
    public var errorDetail: [String: Any]? { errorObject?["detail"] as? [String: Any] }

    private func errorMember(_ name: String) -> String? { errorObject?[name] as? String }

    private var errorObject: [String: Any]? {
        let line = stderr.split(separator: "\n").last { $0.hasPrefix("{\"error\":") }
        guard let line, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else { return nil }
        return (object as? [String: Any])?["error"] as? [String: Any]
    }
}
