import Foundation
import LedgerTestSupport
import Testing

/// How the tests of the built `jqc` set up their ledgers, written once.
extension JQCRunner {
    /// `jqc init`, then the sample reference data pulled; each must succeed.
    func initWithSampleReference(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(self("init").status == 0, sourceLocation: sourceLocation)
        try #require(self("pull", "--from", SampleReference.path).status == 0, sourceLocation: sourceLocation)
    }

    /// Starts an inspection of `template` at facility 101 as Dana; its id.
    func startInspection(_ template: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try self("--as", "Dana", "start", "-t", template, "-f", "101", "--json")
        try #require(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object?["id"] as? String, sourceLocation: sourceLocation)
    }

    /// Checks (without stopping the test) that jqc succeeded and was not
    /// ended by a signal; the result either way.
    @discardableResult
    static func succeeded(_ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation)
        -> ProcessResult
    {
        #expect(result.status == 0 && !result.signalled, "jqc failed: \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    /// A new ledger with the sample reference data and a restroom inspection
    /// at Riverside answered five times (`Floors` 1 to 5), each step checked
    /// with `succeeded`: where the damage and backup tests start. The
    /// inspection's first eight digits.
    func recordSampleInspection() throws -> String {
        try Self.succeeded(self("init"))
        try Self.succeeded(self("pull", "--from", SampleReference.path))
        let started = try Self.succeeded(
            self(
                "--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility",
                "Riverside Medical Center", "--area", "1001"))
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let inspection = String(try #require(object?["id"] as? String).prefix(8))
        for value in ["1", "2", "3", "4", "5"] {
            try Self.succeeded(self("--as", "Dana", "set", inspection, "Floors", value))
        }
        return inspection
    }
}
