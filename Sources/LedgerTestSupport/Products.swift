import Foundation

/// Finds what tests need outside the test process: the built executables and
/// the repository's own files (tools, fixtures, schemas).
public enum Products {
    /// The repository root, found from this file's place in `Sources/`.
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// A file of the repository, by its path relative to the root.
    public static func repositoryFile(_ relativePath: String) -> String {
        repositoryRoot + "/" + relativePath
    }

    /// The directory holding the built products (`.build/debug` or similar):
    /// where the test bundle itself was built.
    public static let directory: String = {
        let candidates = [
            Bundle.main.bundleURL,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for candidate in candidates
        where FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("ledger-writer").path) {
            return candidate.path
        }
        return candidates[0].path
    }()

    /// The path of a built executable, such as `jqc` or `ledger-writer`.
    /// `JQC_BIN`, when set, names the `jqc` to run instead of the one built
    /// beside the tests (the Python tests read it too): Tools/test gives its
    /// test package's release build, whose start costs a quarter of the
    /// debug build's CPU (no shared Swift runtime and Foundation to bind),
    /// over the suites' six thousand runs of `jqc`.
    public static func executable(_ name: String) -> String {
        if name == "jqc", let jqc = chosenJQC { return jqc }
        return directory + "/" + name
    }

    /// `JQC_BIN`, made absolute; nil when unset or empty.
    static let chosenJQC: String? = {
        guard let path = ProcessInfo.processInfo.environment["JQC_BIN"], !path.isEmpty else { return nil }
        return path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }()

    /// How to run `python3` (the one `PATH` names): its interpreter, asked
    /// once. A version manager's shim (pyenv's is a bash script that runs
    /// `pyenv exec`) chooses the interpreter again at every start: 0.09 s of
    /// CPU and 0.16 s of wall each, measured, for every server a test starts;
    /// 0.14 s of CPU against 0.01 s for the interpreter itself (`perf stat`,
    /// `python3 -S -c pass`), for every verifier, validator or script a test
    /// runs. So every Python a test runs is started with this, never through
    /// `/usr/bin/env python3`.
    /// Falls back to `/usr/bin/env python3` when the question is not answered.
    public static let python: (executable: String, arguments: [String]) = {
        let asked = try? ProcessRun.run(
            "/usr/bin/env", ["python3", "-c", "import sys; print(sys.executable)"], timeout: 60)
        let path = asked?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard asked?.status == 0, path.hasPrefix("/"), FileManager.default.isExecutableFile(atPath: path) else {
            return ("/usr/bin/env", ["python3"])
        }
        return (path, [])
    }()
}
