import CurlTransport
import Foundation
import HTTPCore
import InspectionDomain
import LedgerTestSupport

/// `Tools/devserver/server.py`, running as a child process for one test on
/// 127.0.0.1 with a port of its own, its own database and the `/__admin`
/// endpoints.
///
/// The server stops by itself after `lifetime` seconds (`--exit-after`), and
/// is killed when this value goes away, so none outlives its test.
final class DevServer: @unchecked Sendable {
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    static let script = Products.repositoryFile("Tools/devserver/server.py")
    static let forkServer = Products.repositoryFile("Tools/devserver/forkserver.py")

    let directory = TemporaryDirectory(prefix: "devserver")
    private(set) var port = 0
    private var process: Process?
    private let extraArguments: [String]
    private let lifetime: Int
    private let admin: CurlHTTPClient

    /// The API's base URL, as `jqc init --server` takes it.
    var baseURL: String { "http://127.0.0.1:\(port)/api/v1" }

    /// Which backend the server plays (`--profile`): the whole of
    /// `Schemas/openapi.yaml`, or the reference backend as its document
    /// describes it (no `Idempotency-Key`, no `client_id`, areas only through
    /// their endpoint, no template versions, tokens-only login answers).
    enum Profile: String, CaseIterable, Sendable, CustomStringConvertible {
        case contract, reference

        var description: String { rawValue }
        /// Whether the server answers a replayed write with its first answer.
        var honoursIdempotency: Bool { self == .contract }
    }

    let profile: Profile

    /// Starts a server; `arguments` are extra flags (`--latency-ms 50`).
    /// The lifetime is a backstop for a test that crashes (the value's
    /// deinit kills the server first): long enough for the slowest test on
    /// a loaded 2-core machine.
    init(_ arguments: [String] = [], profile: Profile = .contract, lifetime: Int = 600) throws {
        self.profile = profile
        extraArguments = ["--profile", profile.rawValue] + arguments
        self.lifetime = lifetime
        admin = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(10)))
        try start()
    }

    deinit { stop() }

    /// Starts (or restarts, on the same port and database) the server.
    func start() throws {
        let portFile = directory.appending("port-\(UUID().uuidString.prefix(6))")
        let process = Process()
        // Through the fork server: a server forked from one that has already
        // imported everything and read the document starts in a fraction of
        // the CPU (forkserver.py); it runs `server.py` itself when it cannot.
        process.executableURL = URL(fileURLWithPath: Products.python.executable)
        process.arguments =
            Products.python.arguments + [
                Self.forkServer, "run", "--port", "\(port)", "--port-file", portFile, "--exit-after", "\(lifetime)",
                "--admin", "--quiet", "--db", directory.appending("server.sqlite"),
            ] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        // A file, not a pipe: a pipe nobody reads would block a chatty server.
        let log = directory.appending("server.log")
        guard FileManager.default.createFile(atPath: log, contents: nil) else {
            throw StartFailure(description: "could not create \(log)")
        }
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        self.process = process
        // Python's start-up (imports, the database) took over 15 s when the
        // whole suite ran beside five builds; the wait ends early if it dies.
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let bound = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                port = bound
                return
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        process.terminate()
        let stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw StartFailure(description: "the development server did not start: \(stderr)")
    }

    /// Kills the server (the database stays, so `start()` brings it back)
    /// and returns once its port refuses connections: the process killed is
    /// the fork server's asker, whose server then kills itself (at once, but
    /// in another process), and a restart binds the same port.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let deadline = Date().addingTimeInterval(10)
        // Any answer means the server still listens; a failure that it does not.
        let probe = HTTPRequest(url: adminURL("/__admin/stats"), freshConnection: true)
        while Date() < deadline, (try? admin.send(probe)) != nil { usleep(10_000) }
    }

    // MARK: - /__admin

    /// `POST /__admin/faults` with these settings.
    func faults(_ settings: JSONValue) throws {
        _ = try adminCall(.post, "/__admin/faults", body: settings)
    }

    /// `POST /__admin/reset-faults`.
    /// How the witness answers a checkpoint: "honest", or "another_checkpoint"
    /// (999,999 records and a made-up root, whatever was sent).
    func witnessAnswers(_ answer: String) throws {
        _ = try adminCall(.post, "/__admin/witness", body: .object(["answer": .string(answer)]))
    }

    func resetFaults() throws {
        _ = try adminCall(.post, "/__admin/reset-faults", body: .object([]))
    }

    /// `GET /__admin/stats`'s data.
    func stats() throws -> JSONValue {
        try adminCall(.get, "/__admin/stats", body: nil)
    }

    /// A count from the stats: `inspections`, `issues`, `photos`, `idempotency_keys`.
    func count(_ key: String) throws -> Int {
        Int(try stats()[key]?.integerValue ?? -1)
    }

    /// How many requests of `route` (`"POST /api/v1/inspections"`) were answered `status`.
    func requests(_ route: String, status: String) throws -> Int {
        Int(try stats()["requests"]?[route]?[status]?.integerValue ?? 0)
    }

    private func adminURL(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    private func adminCall(_ method: HTTPMethod, _ path: String, body: JSONValue?) throws -> JSONValue {
        let request = HTTPRequest(
            method: method, url: adminURL(path),
            body: body.map { .json(Array($0.serialized().utf8)) } ?? .empty)
        let response = try admin.send(request)
        let envelope = try JSONValue(parsing: response.body)
        guard response.isSuccess, let data = envelope["data"] else {
            throw StartFailure(description: "\(method) \(path) answered \(response.status)")
        }
        return data
    }
}
