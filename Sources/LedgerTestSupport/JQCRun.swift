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
