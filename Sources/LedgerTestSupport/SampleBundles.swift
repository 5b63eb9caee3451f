import Foundation

/// A ledger made by the built `jqc` (`init`, then the sample reference data
/// pulled) for tests that prove inspections and hand the bundles to the two
/// outside verifiers: `Tools/verify-ledger --bundle` (Python) and
/// `Tools/verify-bundle-go` (Go's sumdb), built once per test run.
public struct ProvingLedger: Sendable {
    public let directory = TemporaryDirectory()
    public let jqc: JQCRunner
    public var path: String { directory.appending("ledger") }

    /// A jqc run that did not succeed, with what it said.
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"), environment: ["JQC_AS_TEST": "1"])
        try Self.succeeded(jqc("init"))
        try Self.succeeded(jqc("pull", "--from", SampleReference.path))
    }

    /// `result`, or `Failed` when jqc did not exit with status 0.
    @discardableResult
    public static func succeeded(_ result: ProcessResult) throws -> ProcessResult {
        guard result.status == 0 else {
            throw Failed(description: "jqc failed (status \(result.status)): \(result.stdout)\(result.stderr)")
        }
        return result
    }

    /// Writes `text` to `name` in the test's directory; its path.
    public func write(_ text: String, _ name: String) throws -> String {
        let path = directory.appending(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Starts a "Restroom QC" inspection at Riverside Medical Center, area 1001; its id.
    public func start() throws -> String {
        let result = try Self.succeeded(
            jqc(
                "--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility",
                "Riverside Medical Center", "--area", "1001"))
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let id = object["id"] as? String
        else { throw Failed(description: "start printed no id: \(result.stdout)") }
        return id
    }

    /// `jqc prove ID` as a JSON object.
    public func bundle(_ id: String) throws -> [String: Any] {
        let result = try Self.succeeded(jqc("prove", id))
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw Failed(description: "prove printed no JSON object")
        }
        return object
    }
}

/// The two bundle verifiers that share no code with this package.
public enum BundleVerifiers {
    /// `Tools/verify-bundle-go`, built once per test process into the
    /// package's build directory, and removed when the process ends (each
    /// run left one behind before).
    public static let go: Result<String, any Error> = Result {
        let out = Products.repositoryFile(".build/verify-bundle-go-\(getpid())")
        ExitCleanup.remove(atExit: out)
        let build = try ProcessRun.run(
            "/usr/bin/env", ["bash", Products.repositoryFile("Tools/verify-bundle-go/build"), out])
        guard build.status == 0 else { throw ProvingLedger.Failed(description: build.stderr) }
        return out
    }

    /// The Python verifier's and the Go one's runs on `bundle` with `options`.
    public static func run(_ bundle: String, _ options: [String] = []) throws -> (
        python: ProcessResult, go: ProcessResult
    ) {
        let python = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/verify-ledger"), "--bundle", bundle] + options)
        let go = try ProcessRun.run(try go.get(), options + [bundle])
        return (python, go)
    }
}
