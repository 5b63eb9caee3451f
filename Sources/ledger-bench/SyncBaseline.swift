import CurlTransport
import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import Synchronization

/// The baseline of `ledger-bench sync`: the requests the sync worker makes,
/// from the bodies prebuilt in `plan.jsonl`, with the same concurrency (every
/// upload, then every inspection, then every issue, each phase over
/// `concurrency` kept-alive connections), and no ledger behind it: no
/// outbox, no folding, no events recorded. What the worker costs on top of
/// the network is the gap between the two.
struct SyncBaseline {
    var baseURL: String
    var planPath: String
    var concurrency: Int

    /// One upload, inspection or issue of the plan.
    private struct Item: Sendable {
        var photos: [(file: String, filename: String, fieldID: String, key: String)]
        var photoFields: [(field: String, index: Int)]
        var inspectionKey: String
        var inspection: JSONValue
        var issues: [(key: String, body: JSONValue)]
    }

    /// Runs the plan against a fresh server; answers the seconds the requests took.
    func run() throws -> Double {
        let (plan, files) = try load()
        let client = try CurlHTTPClient(connections: concurrency)
        let login = try call(
            client,
            HTTPRequest(
                method: .post, url: baseURL + "/auth/login",
                body: .json(Array(#"{"username": "inspector", "password": "inspector-pass"}"#.utf8))))
        guard let token = login["access_token"]?.stringValue else { throw BenchError("the baseline's login failed") }
        let headers: HTTPHeaders = ["Accept": "application/json", "Authorization": "Bearer \(token)"]

        let start = ContinuousClock.now
        let uploads = plan.enumerated().flatMap { index, item in item.photos.map { (index, $0) } }
        let paths = try parallel(uploads.count) { n in
            let (_, photo) = uploads[n]
            var request = HTTPRequest(
                method: .post, url: baseURL + "/photos/upload", headers: headers,
                body: .multipart([
                    .file("file", filename: photo.filename, contentType: "image/png", data: files[photo.file] ?? []),
                    .field("entity_type", "inspection"), .field("field_id", photo.fieldID),
                ]))
            request.headers.set("Idempotency-Key", photo.key)
            return try call(client, request)["path"]?.stringValue ?? ""
        }
        var collected = Array(repeating: [String](), count: plan.count)
        for (n, upload) in uploads.enumerated() { collected[upload.0].append(paths[n]) }
        let pathsByItem = collected
        let ids = try parallel(plan.count) { n in
            var body = plan[n].inspection
            if case .object(var members) = body, let form = members.firstIndex(where: { $0.key == "form_data" }),
                case .object(var fields) = members[form].value
            {
                for (field, index) in plan[n].photoFields {
                    if let slot = fields.firstIndex(where: { $0.key == field }), index < pathsByItem[n].count {
                        fields[slot].value = .string(pathsByItem[n][index])
                    }
                }
                members[form].value = .object(fields)
                body = .object(members)
            }
            var request = HTTPRequest(
                method: .post, url: baseURL + "/inspections", headers: headers,
                body: .json(Array(body.serialized().utf8)))
            request.headers.set("Idempotency-Key", plan[n].inspectionKey)
            return try call(client, request)["id"] ?? .null
        }
        let issues = plan.enumerated().flatMap { index, item in item.issues.map { (index, $0) } }
        _ = try parallel(issues.count) { n in
            let (index, issue) = issues[n]
            var body = issue.body
            if case .object(var members) = body, let slot = members.firstIndex(where: { $0.key == "inspection_id" }) {
                members[slot].value = ids[index]
                body = .object(members)
            }
            var request = HTTPRequest(
                method: .post, url: baseURL + "/issues", headers: headers, body: .json(Array(body.serialized().utf8)))
            request.headers.set("Idempotency-Key", issue.key)
            return try call(client, request)
        }
        _ = try call(client, HTTPRequest(url: baseURL + "/facilities", headers: headers))
        _ = try call(client, HTTPRequest(url: baseURL + "/templates", headers: headers))
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The plan's items and the photo files they upload, read before the clock starts.
    private func load() throws -> (plan: [Item], files: [String: [UInt8]]) {
        let text = try String(contentsOfFile: planPath, encoding: .utf8)
        var plan: [Item] = []
        var files: [String: [UInt8]] = [:]
        for line in text.split(separator: "\n") {
            let json = try JSONValue(parsing: String(line))
            let photos = (json["photos"]?.arrayValue ?? []).map { photo in
                (
                    file: photo["file"]?.stringValue ?? "", filename: photo["filename"]?.stringValue ?? "",
                    fieldID: photo["field_id"]?.stringValue ?? "", key: photo["key"]?.stringValue ?? ""
                )
            }
            for photo in photos where files[photo.file] == nil {
                files[photo.file] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo.file)))
            }
            var photoFields: [(field: String, index: Int)] = []
            if case .object(let members)? = json["photo_fields"] {
                photoFields = members.map { ($0.key, Int($0.value.integerValue ?? 0)) }
            }
            plan.append(
                Item(
                    photos: photos, photoFields: photoFields,
                    inspectionKey: json["inspection"]?["key"]?.stringValue ?? "",
                    inspection: json["inspection"]?["body"] ?? .null,
                    issues: (json["issues"]?.arrayValue ?? []).map {
                        ($0["key"]?.stringValue ?? "", $0["body"] ?? .null)
                    }))
        }
        return (plan, files)
    }

    /// Sends `request`; answers the envelope's `data`, or throws on anything but success.
    private func call(_ client: CurlHTTPClient, _ request: HTTPRequest) throws -> JSONValue {
        let response = try client.send(request)
        let envelope = try JSONValue(parsing: response.body)
        guard response.isSuccess, envelope["ok"]?.boolValue == true else {
            throw BenchError("the baseline's \(request.method.rawValue) \(request.url) answered \(response.status)")
        }
        return envelope["data"] ?? .null
    }

    /// `count` calls of `body`, `concurrency` at a time, answers in order.
    private func parallel<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
        let state = Mutex<(next: Int, results: [Int: T], failure: String?)>((0, [:], nil))
        // Threads of their own: `concurrentPerform` would run no more at once than there are cores.
        let workers = max(1, min(concurrency, count))
        let finished = DispatchSemaphore(value: 0)
        let work: @Sendable () -> Void = {
            defer { finished.signal() }
            while true {
                let n: Int? = state.withLock { s in
                    guard s.next < count, s.failure == nil else { return nil }
                    s.next += 1
                    return s.next - 1
                }
                guard let n else { return }
                do {
                    let result = try body(n)
                    state.withLock { $0.results[n] = result }
                } catch {
                    state.withLock { $0.failure = "\(error)" }
                }
            }
        }
        for _ in 0..<workers { Thread(block: work).start() }
        for _ in 0..<workers { finished.wait() }
        let (results, failure) = state.withLock { ($0.results, $0.failure) }
        if let failure { throw BenchError(failure) }
        let ordered = (0..<count).compactMap { results[$0] }
        guard ordered.count == count else { throw BenchError("the baseline lost \(count - ordered.count) answers") }
        return ordered
    }
}
