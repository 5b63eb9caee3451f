import Foundation

/// A test server: a Python script run as a child process for one test. It
/// listens on 127.0.0.1 on a port the system chooses and prints that port on
/// stdout; it exits by itself after its own lifetime or when its stdin
/// closes, and is terminated when this value goes away, so none outlives its
/// test even if the test crashes. (`HostileServer`, `FixtureServer`.)
public final class ScriptServer: @unchecked Sendable {
    public let port: Int
    private let process = Process()
    /// Held open for the server's life: closing it tells the server to exit.
    private let input = Pipe()
    /// Where its stderr goes (a file, never a pipe that a chatty server could fill).
    private let logs = TemporaryDirectory(prefix: "script-server")

    /// A server that printed no port, with what it wrote on stderr.
    public struct StartFailure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Runs `python3 script arguments…` and waits for the port line.
    public init(script: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Products.python.executable)
        process.arguments = Products.python.arguments + [script] + arguments
        let output = Pipe()
        let errorPath = logs.appending("stderr")
        // Without the file, the server's stderr would be lost (or fill the
        // test's own): the test stops here, saying where it could not write.
        guard FileManager.default.createFile(atPath: errorPath, contents: nil),
            let errors = FileHandle(forWritingAtPath: errorPath)
        else {
            throw StartFailure(
                description: "cannot create \(errorPath) for the stderr of the server \(script): "
                    + "check that the temporary directory \(logs.path) exists and is writable")
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        let line = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(line) else {
            process.terminate()
            process.waitUntilExit()
            let stderr = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw StartFailure(description: "the server \(script) printed no port: \(line) \(stderr)")
        }
        self.port = port
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }
}
