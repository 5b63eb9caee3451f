// libFuzzer target: the server's answers as `APIClient` reads them (the
// envelope at every status, users and their integer ids, tokens, reference
// data with its per-facility and per-template follow-ups, upload paths,
// created records, history pages), and a saved session's user and tokens.
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
//
// The first byte picks the call (low nibble) and the status (high nibble);
// the second byte the base URL and the headers (Retry-After,
// Idempotent-Replayed); the rest is the body every request of the call is
// answered with. A call makes at most a few requests: the fourth fails as
// a lost connection, so a list of a thousand facilities is not a thousand
// re-reads of the same body.
import Foundation
import HTTPCore
import InspectionDomain
import SyncWorker

final class RequestCount: @unchecked Sendable {
    var count = 0
}

struct FuzzTransport: HTTPTransport {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]
    let requests = RequestCount()

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        requests.count += 1
        guard requests.count <= 3 else { throw .connectionLost(detail: "the fuzz transport answers three requests") }
        if body.count > request.maximumResponseBytes {
            throw .responseTooLarge(url: request.url, limit: request.maximumResponseBytes)
        }
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}

let statuses = [200, 201, 200, 401, 404, 429, 503, 400, 204, 299, 302, 408, 500, 409, 422, 100]
let retryAfters = ["", "5", " 120 ", "-1", "99999999999999999999", "Wed, 21 Oct 2026 07:28:00 GMT", "x", "0"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponse(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard bytes.count >= 2 else { return 0 }
    let call = Int(bytes[0] & 0x0F)
    let status = statuses[Int(bytes[0] >> 4)]
    var headers: HTTPHeaders = ["Content-Type": "application/json"]
    let retryAfter = retryAfters[Int(bytes[1] & 0x07)]
    if !retryAfter.isEmpty { headers.set("Retry-After", retryAfter) }
    if bytes[1] & 0x08 != 0 { headers.set("Idempotent-Replayed", bytes[1] & 0x10 != 0 ? "true" : "TRUE ") }
    let body = Array(bytes.dropFirst(2))
    let base = bytes[1] & 0x20 != 0 ? "https://fuzz.invalid" : "https://fuzz.invalid/api/v1/"
    let client = APIClient(
        baseURL: base, transport: FuzzTransport(status: status, headers: headers, body: body),
        limits: .init(json: 1 << 16, write: 1 << 15, upload: 1 << 12))
    let token = "fuzz-access-token"
    let inspection: JSONValue = .object([
        "facility_id": .integer(1), "template_id": .integer(11), "started_at": .string("2026-12-02T00:00:00Z"),
        "completed_at": .string("2026-12-02T01:00:00.000000Z"),
    ])
    do {
        switch call {
        case 0: _ = try client.login(username: "dana", password: "secret")
        case 1: _ = try client.refresh(refreshToken: "fuzz-refresh-token")
        case 2: _ = try client.me(accessToken: token)
        case 3: try client.logout(refreshToken: "fuzz-refresh-token", accessToken: token)
        case 4: _ = try client.referenceData(accessToken: token)
        case 5:
            let upload = PhotoUpload(
                bytes: [0x89, 0x50], filename: "p.png", mediaType: "image/png", entityType: "inspection",
                fieldID: "10")
            _ = try client.uploadPhoto(upload, accessToken: token, idempotencyKey: "k1")
        case 6: _ = try client.create(.inspections, body: inspection, accessToken: token, idempotencyKey: "k2")
        case 7: _ = try client.create(.issues, body: .object([:]), accessToken: token, idempotencyKey: "k3")
        case 8: _ = try client.history(accessToken: token, limit: 50, offset: 0)
        case 9: _ = try client.findInspection(like: inspection, accessToken: token)
        default:
            // A saved session (credentials.json): its user must have an integer id.
            let decoder = JSONDecoder()
            _ = try? decoder.decode(ServerUser.self, from: Data(body))
            _ = try? decoder.decode(SessionTokens.self, from: Data(body))
            return 0
        }
    } catch {
        // Every refusal has words, and they can be shown.
        _ = "\(error)"
        _ = error.isTransient
    }
    return 0
}
