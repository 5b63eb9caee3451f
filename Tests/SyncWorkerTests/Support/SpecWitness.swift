import CurlTransport
import Foundation
import HTTPCore
import InspectionDomain
import LedgerTestSupport

/// `Tools/witness/serve.py`, a C2SP tlog-witness written from the specs
/// only, running as a child process for one test on 127.0.0.1, with its own
/// key and state and its development enrolment route. Killed when this value
/// goes away, so none outlives its test.
final class SpecWitness: @unchecked Sendable {
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    static let script = Products.repositoryFile("Tools/witness/serve.py")

    let directory = TemporaryDirectory(prefix: "spec-witness")
    private let process = Process()
    /// Its submission prefix and cosigner verifier key, as it printed them.
    private(set) var url = ""
    private(set) var vkey = ""
    let name: String
    private let client: CurlHTTPClient

    /// - Parameter tamper: every cosignature it returns has a bit flipped.
    init(name: String = "witness.example/w1", tamper: Bool = false) throws {
        self.name = name
        client = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(10)))
        process.executableURL = URL(fileURLWithPath: Products.python.executable)
        process.arguments =
            Products.python.arguments + [
                Self.script, "--state", directory.appending("state"), "--name", name, "--allow-enrolment",
            ]
            + (tamper ? ["--tamper"] : [])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // It prints one JSON line, then nothing more: reading it cannot block a chatty child.
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        let started = try JSONValue(parsing: [UInt8](line))
        guard let url = started["url"]?.stringValue, let vkey = started["vkey"]?.stringValue else {
            throw StartFailure(description: "the witness did not start: \(String(decoding: line, as: UTF8.self))")
        }
        self.url = url
        self.vkey = vkey
    }

    deinit { stop() }

    /// Kills it (its state stays on disk).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The operator's act: trust `logKey` for the log `origin` (the development route).
    func enrol(origin: String, logKey: String) throws {
        let response = try client.send(
            HTTPRequest(
                method: .post, url: url + "/enrol",
                body: .bytes(Array("\(origin)\n\(logKey)\n".utf8), contentType: "text/plain")))
        guard response.status == 200 else { throw StartFailure(description: "enrolment answered \(response.status)") }
    }

    /// The add-checkpoint call made by someone else (another submitter of the same log).
    func addCheckpoint(old: UInt64, note: String) throws -> Int {
        try client.send(
            HTTPRequest(
                method: .post, url: url + "/add-checkpoint",
                body: .bytes(Array("old \(old)\n\n\(note)".utf8), contentType: "text/plain"))
        ).status
    }

    /// The size it holds for `origin` (its state file).
    func heldSize(_ origin: String) throws -> Int64? {
        let path = directory.appending("state/state.json")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try JSONValue(parsing: [UInt8](data))[origin]?["size"]?.integerValue
    }
}
