import CurlTransport
import Foundation
import HTTPCore
import InspectionDomain
import LedgerTestSupport

/// A C2SP tlog-witness a test submits to, whichever program serves it: what
/// `StandardWitnessTests` needs of one (its submission prefix and key, the
/// operator's enrolment, a submission by someone else, the size it holds,
/// and stopping it).
protocol WitnessHost: AnyObject, Sendable {
    /// Its submission prefix (jqc posts to `url/add-checkpoint`).
    var url: String { get }
    /// Its cosigner verifier key.
    var vkey: String { get }
    /// Its name (the key's name).
    var name: String { get }
    /// The operator's act: trust `logKey` for the log `origin`.
    func enrol(origin: String, logKey: String) throws
    /// The add-checkpoint call made by someone else (another submitter of the same log); its status.
    func addCheckpoint(old: UInt64, note: String) throws -> Int
    /// The size it holds for `origin` (its state file), nil when it holds none.
    func heldSize(_ origin: String) throws -> Int64?
    /// Kills it (its state stays on disk).
    func stop()
}

/// The two witnesses every case of `StandardWitnessTests` runs against: the
/// one written from the specs only (`Tools/witness/serve.py`), and the
/// development server's at `/witness` (`Tools/devserver/standard_witness.py`).
enum WitnessKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case specOnly = "spec-only"
    case devServer = "devserver"

    var description: String { rawValue }

    /// A new witness of this kind named `name`; `tamper`: every cosignature
    /// it returns has a bit flipped (the spec witness's `--tamper`, the
    /// development server's development-only `--witness-tamper`).
    func start(name: String = "witness.example/w1", tamper: Bool = false) throws -> any WitnessHost {
        switch self {
        case .specOnly: try SpecWitness(name: name, tamper: tamper)
        case .devServer: try DevServerWitness(name: name, tamper: tamper)
        }
    }
}

extension SpecWitness: WitnessHost {}

/// The development server's standard witness (`/witness`) on a server of
/// its own: enrolment is its development route, made by a logged-in client
/// (the server's default user), as `Tools/demo` makes it.
final class DevServerWitness: WitnessHost {
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    let server: DevServer
    let name: String
    let url: String
    let vkey: String
    private let client: CurlHTTPClient

    init(name: String, tamper: Bool) throws {
        server = try DevServer(["--witness-name", name] + (tamper ? ["--witness-tamper"] : []))
        self.name = name
        client = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(10)))
        url = "http://127.0.0.1:\(server.port)/witness"
        let key = try client.send(HTTPRequest(url: url + "/key"))
        guard key.status == 200 else { throw Refused(description: "GET /witness/key answered \(key.status)") }
        vkey = String(decoding: key.body, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    func enrol(origin: String, logKey: String) throws {
        let login = try client.send(
            HTTPRequest(
                method: .post, url: "http://127.0.0.1:\(server.port)/api/v1/auth/login",
                body: .json(Array(#"{"username":"inspector","password":"inspector-pass"}"#.utf8))))
        guard let token = try JSONValue(parsing: login.body)["data"]?["access_token"]?.stringValue else {
            throw Refused(description: "the login answered \(login.status)")
        }
        let response = try client.send(
            HTTPRequest(
                method: .post, url: url + "/enrol", headers: ["Authorization": "Bearer \(token)"],
                body: .bytes(Array("\(origin)\n\(logKey)\n".utf8), contentType: "text/plain")))
        guard response.status == 200 else { throw Refused(description: "enrolment answered \(response.status)") }
    }

    func addCheckpoint(old: UInt64, note: String) throws -> Int {
        try client.send(
            HTTPRequest(
                method: .post, url: url + "/add-checkpoint",
                body: .bytes(Array("old \(old)\n\n\(note)".utf8), contentType: "text/plain"))
        ).status
    }

    /// Its state file beside the server's database (`<db>.witness/state.json`).
    func heldSize(_ origin: String) throws -> Int64? {
        let path = server.directory.appending("server.sqlite.witness/state.json")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try JSONValue(parsing: [UInt8](data))[origin]?["size"]?.integerValue
    }

    func stop() { server.stop() }
}
