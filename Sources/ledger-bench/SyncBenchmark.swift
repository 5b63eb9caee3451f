import Foundation
import InspectionDomain
// The benchmark seeds its ledger with prepared batches appended as they are:
// it measures the sync run, not the decisions that would have made them.
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport

/// A full sync of `inspections` completed inspections (40 fields, two 200 KB
/// photos and one issue each) by `jqc sync` against the development server,
/// and the same requests made by a plain keep-alive client
/// (`Tools/sync-bench-client`, one `requests.Session`, prebuilt bodies, no
/// ledger) against a fresh server database, in the same run.
///
/// The worker's time is the run as `jqc sync --json` measures it
/// (`elapsed_seconds`: outbox to reference pull, process start excluded);
/// the plain client's is its request loop. Target: the worker reaches at
/// least 80% of the plain client's throughput.
///
/// With `latencyMilliseconds` (the development server's `--latency-ms`, a
/// slow link) the rows are: `jqc sync --concurrency 1` (one at a time, on a
/// smaller ledger so the run stays short; compared per inspection), `jqc
/// sync --concurrency N`, and `SyncBaseline` (the same requests, prebuilt,
/// with the same concurrency, no ledger). Targets: at least 5× one at a
/// time, and at least 80% of the baseline.
struct SyncBenchmark {
    var inspections: Int
    var directory: String
    /// Added by the server to every API request; 0 runs the local comparison above.
    var latencyMilliseconds = 0
    /// Requests in flight at once for the worker and the baseline, with latency.
    var concurrency = 8

    /// Distinct photo files, reused round-robin: the requests carry 200 KB
    /// each all the same, without filling the disk with 2 × N files.
    static let photoPool = 16
    static let photoSize = 200 * 1024
    static let templateID = 77
    static let facilityID = 501
    static let areaID = 5001

    /// Rounds per side, alternating worker and plain client; the best of each
    /// is compared, so a burst of other load on the machine costs neither side.
    var rounds = 2

    func run() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fixtures = directory + "/fixtures"
        try writeFixtures(fixtures)
        let pristine = directory + "/ledger"
        try jqc(["--ledger", pristine, "init"])
        let tBuild = try Measure.seconds { try buildLedger(pristine, count: inspections, plan: "plan.jsonl") }
        print(String(format: "  built %d inspections in %.1f s", inspections, tBuild))
        if latencyMilliseconds > 0 {
            try runWithLatency(pristine: pristine, fixtures: fixtures)
            return
        }

        var workerTimes: [Double] = []
        var plainTimes: [Double] = []
        for round in 1...rounds {
            // Like for like: the plain client keeps one connection.
            workerTimes.append(try workerRound(round, pristine: pristine, fixtures: fixtures, concurrency: 1))
            plainTimes.append(try plainRound(round, fixtures: fixtures))
        }

        let worker = Double(inspections) / workerTimes.min()!
        let plain = Double(inspections) / plainTimes.min()!
        func list(_ times: [Double]) -> String { times.map { String(format: "%.2f s", $0) }.joined(separator: ", ") }
        print("  requests: \(4 * inspections + 2) per side (2 uploads, 1 inspection, 1 issue each; then the pull)")
        print("  rounds: worker \(list(workerTimes)); plain \(list(plainTimes)) (best of each below)")
        print(String(format: "  jqc sync (SyncRun, libcurl)       %8.1f inspections/s", worker))
        print(String(format: "  plain keep-alive client (Python)  %8.1f inspections/s", plain))
        print(String(format: "  worker / plain                    %8.2f             target ≥ 0.80", worker / plain))
    }

    /// The slow-link rows: one at a time, concurrent, and the baseline.
    func runWithLatency(pristine: String, fixtures: String) throws {
        // One at a time takes 4 round trips per inspection: a smaller ledger
        // keeps the run short, compared per inspection.
        let small = min(inspections, 12)
        let smallLedger = directory + "/ledger-small"
        try jqc(["--ledger", smallLedger, "init"])
        try buildLedger(smallLedger, count: small, plan: "plan-small.jsonl")
        let serial = try workerRound(0, pristine: smallLedger, fixtures: fixtures, concurrency: 1, count: small)
        let parallel = try workerRound(1, pristine: pristine, fixtures: fixtures, concurrency: concurrency)
        let server = try BenchServer(
            fixtures: fixtures, database: directory + "/baseline.sqlite", latencyMilliseconds: latencyMilliseconds)
        defer { server.stop() }
        let baseline = try SyncBaseline(
            baseURL: server.baseURL, planPath: directory + "/plan.jsonl", concurrency: concurrency
        ).run()
        let rates = (
            serial: Double(small) / serial, parallel: Double(inspections) / parallel,
            baseline: Double(inspections) / baseline
        )
        print("  server latency \(latencyMilliseconds) ms per request; 4 requests per inspection, then the pull")
        print(
            String(
                format: "  jqc sync --concurrency 1   %6.2f s for %4d  %8.2f inspections/s", serial, small, rates.serial
            ))
        print(
            String(
                format: "  jqc sync --concurrency %-2d  %6.2f s for %4d  %8.2f inspections/s", concurrency, parallel,
                inspections, rates.parallel))
        print(
            String(
                format: "  baseline, %2d connections  %6.2f s for %4d  %8.2f inspections/s", concurrency, baseline,
                inspections, rates.baseline))
        print(
            String(
                format: "  concurrent / one at a time %8.2f             target ≥ 5.00", rates.parallel / rates.serial))
        print(
            String(
                format: "  concurrent / baseline      %8.2f             target ≥ 0.80", rates.parallel / rates.baseline)
        )
    }

    /// One full `jqc sync` of a fresh copy of the ledger against a fresh
    /// server: the seconds it reports for its run.
    func workerRound(
        _ round: Int, pristine: String, fixtures: String, concurrency: Int? = nil, count: Int? = nil
    ) throws -> Double {
        let server = try BenchServer(
            fixtures: fixtures, database: directory + "/worker-\(round).sqlite",
            latencyMilliseconds: latencyMilliseconds)
        defer { server.stop() }
        let ledger = directory + "/ledger-\(round)"
        try FileManager.default.copyItem(atPath: pristine, toPath: ledger)
        defer { try? FileManager.default.removeItem(atPath: ledger) }
        try jqc(
            ["--ledger", ledger, "login", "--server", server.baseURL, "--username", "inspector", "--password-stdin"],
            input: "inspector-pass\n")
        let output = try jqc(
            ["--ledger", ledger, "--json", "sync"] + (concurrency.map { ["--concurrency", "\($0)"] } ?? []))
        let report = try JSONValue(parsing: output)
        guard let seconds = report["elapsed_seconds"]?.doubleValue,
            report["sent_total"]?.integerValue == Int64(4 * (count ?? inspections)),
            report["failed"]?.arrayValue?.isEmpty == true
        else { throw BenchError("jqc sync did not send everything: \(output.prefix(600))") }
        return seconds
    }

    /// The plain client's requests against a fresh server: the seconds they took.
    func plainRound(_ round: Int, fixtures: String) throws -> Double {
        let server = try BenchServer(fixtures: fixtures, database: directory + "/plain-\(round).sqlite")
        defer { server.stop() }
        let client = Products.repositoryFile("Tools/sync-bench-client")
        let output = try Self.run("/usr/bin/env", ["python3", client, server.baseURL, directory + "/plan.jsonl"])
        guard let seconds = try JSONValue(parsing: output)["elapsed_seconds"]?.doubleValue else {
            throw BenchError("the plain client printed no time: \(output)")
        }
        return seconds
    }

    // MARK: - The development server's fixtures: one facility, one 40-field template

    func writeFixtures(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let facilities = JSONValue.array([
            .object([
                "id": .integer(Self.facilityID), "name": .string("Bench Plant"), "address": .string("1 Bench Rd"),
                "project_name": .string("Benchmarks"),
                "areas": .array([
                    .object([
                        "id": .integer(Self.areaID), "facility_id": .integer(Self.facilityID),
                        "name": .string("Hall A"), "area_type": .string("hall"),
                    ])
                ]),
            ])
        ])
        let fields = Self.fieldTypes.enumerated().map { offset, type -> JSONValue in
            var members: [JSONValue.Member] = [
                .init("id", .integer(offset + 1)), .init("type", .string(type.rawValue)),
                .init("label", .string("\(type.rawValue) \(offset + 1)")), .init("col", .integer(1)),
                .init("row", .integer(offset + 1)), .init("colSpan", .integer(12)), .init("rowSpan", .integer(1)),
            ]
            if type == .radio {
                members.append(.init("options", .array(["Good", "Acceptable", "Poor"].map(JSONValue.string))))
            }
            if type == .select { members.append(.init("options", .array(["Day", "Night"].map(JSONValue.string)))) }
            return .object(members)
        }
        let templates = JSONValue.array([
            .object([
                "id": .integer(Self.templateID), "name": .string("Plant QC"), "version": .integer(1),
                "form_schema": .object(["fields": .array(fields)]),
            ])
        ])
        try Data(facilities.serialized().utf8).write(to: URL(fileURLWithPath: path + "/facilities.json"))
        try Data(templates.serialized().utf8).write(to: URL(fileURLWithPath: path + "/templates.json"))
        try Data(JSONValue.object(["facilities": facilities, "templates": templates]).serialized().utf8)
            .write(to: URL(fileURLWithPath: path + "/reference.json"))
    }

    /// 40 fields that hold a value; the last two are images.
    static let fieldTypes: [FieldType] =
        Array(repeating: .rating, count: 10) + Array(repeating: .passFail, count: 8)
        + Array(repeating: .text, count: 6) + Array(repeating: .number, count: 4) + Array(repeating: .radio, count: 4)
        + [.select, .select, .checkbox, .checkbox, .date, .textarea, .image, .image]

    static func answer(_ type: FieldType, _ index: Int) -> String {
        switch type {
        case .rating: "\(index % 5 + 1)"
        case .passFail: index % 3 == 0 ? "fail" : "pass"
        case .number: "\(index).5"
        case .radio: "Good"
        case .select: "Day"
        case .checkbox: "yes"
        case .date: "2026-03-01"
        case .textarea: String(repeating: "All surfaces inspected; no defects beyond wear. ", count: 4)
        default: "Observation \(index): floor clean, signage present"
        }
    }

    // MARK: - The ledger: N completed inspections, recorded as `jqc` records them

    func buildLedger(_ path: String, count inspections: Int, plan planFile: String) throws {
        let ledger = try InspectionLedger(storePath: path + "/store", photosPath: path + "/photos")
        defer { ledger.close() }
        let clock = SystemClock()
        let reference = try JSONValue(
            parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/fixtures/reference.json"))))
        try ledger.reference.replace(with: try ReferenceCache.Snapshot(json: reference), at: clock.now())
        guard let template = try ledger.reference.template(id: "\(Self.templateID)"),
            let facility = try ledger.reference.facility(id: "\(Self.facilityID)")
        else { throw BenchError("the benchmark's reference data did not load") }
        let photos = try makePhotos(ledger)
        let actor = Actor(id: "1", name: "Dana Inspector", verified: true)
        let configText = try String(contentsOfFile: path + "/config.json", encoding: .utf8)
        guard let deviceText = try JSONValue(parsing: configText)["device_id"]?.stringValue,
            let device = UUID(uuidString: deviceText)
        else { throw BenchError("config.json has no device id") }

        var plan = ""
        var batch: [PendingEvent] = []
        for index in 0..<inspections {
            let id = UUID()
            var state = InspectionState(id: id)
            var events: [PendingEvent] = []
            func decide(_ command: InspectionCommand) throws {
                let now = clock.now()
                for event in try state.decide(command) {
                    state.apply(event, recordedAt: now, actor: actor, pinnedTemplates: [template.contentHash: template])
                    events.append(event.pending(stream: id, actor: actor, device: device, recordedAt: now))
                }
            }
            try decide(
                .start(
                    StartInspection(
                        template: template, templateAlreadyPinned: index > 0, facilityID: facility.id,
                        facilityName: facility.name, areaID: "\(Self.areaID)", areaName: "Hall A")))
            for (offset, type) in Self.fieldTypes.enumerated() where !type.holdsPhoto {
                try decide(.setField(field: "\(offset + 1)", to: .text(Self.answer(type, index + offset))))
            }
            let first = photos[(2 * index) % photos.count]
            let second = photos[(2 * index + 1) % photos.count]
            try decide(.capturePhoto(first.reference(), for: .field("39")))
            try decide(.capturePhoto(second.reference(), for: .field("40")))
            try decide(
                .flagIssue(
                    FlagIssue(issueID: UUID(), severity: "medium", description: "Cracked tile near door \(index)")))
            try decide(.submit(followUpRequired: false))
            batch += events
            plan += planLine(state, photos: [first, second]) + "\n"
            if batch.count >= 2_000 || index == inspections - 1 {
                try ledger.append(batch)
                batch = []
            }
        }
        try Data(plan.utf8).write(to: URL(fileURLWithPath: directory + "/" + planFile))
    }

    /// A photo file kept in the ledger's store.
    struct PoolPhoto {
        var path: String
        var sha256: String
        var size: Int

        func reference() -> PhotoReference {
            PhotoReference(photoID: UUID(), sha256: Digest256(hex: sha256)!, size: size, mediaType: "image/png")
        }
    }

    func makePhotos(_ ledger: InspectionLedger) throws -> [PoolPhoto] {
        var generator = SystemRandomNumberGenerator()
        return try (0..<Self.photoPool).map { index in
            // A PNG signature and random bytes: the store and the server
            // recognise images by their first bytes.
            var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            bytes += (0..<(Self.photoSize - bytes.count)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let file = directory + "/photo-\(index).png"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let prepared = try ledger.photos.prepare(fileAt: file)
            try ledger.photos.keep(prepared)
            return PoolPhoto(path: file, sha256: prepared.description.sha256, size: prepared.description.size)
        }
    }

    /// The plain client's prebuilt requests for one inspection: the bodies the
    /// worker sends, with the photo paths and the inspection id filled in as
    /// the answers come.
    func planLine(_ state: InspectionState, photos: [PoolPhoto]) -> String {
        var form: [JSONValue.Member] = []
        for field in state.template?.fields ?? [] {
            guard let value = state.values[field.id] else { continue }
            if case .photo = value {
                form.append(.init(field.id.rawValue, .string("")))
            } else {
                form.append(.init(field.id.rawValue, value.jsonValue))
            }
        }
        let inspection = JSONValue.object([
            "client_id": .string(state.id.lowercased), "template_id": .integer(Self.templateID),
            "facility_id": .integer(Self.facilityID), "area_id": .integer(Self.areaID), "form_data": .object(form),
            "overall_score": state.score.map(JSONValue.double) ?? .null,
            "started_at": .string(state.startedAt!.iso8601), "completed_at": .string(state.completedAt!.iso8601),
            "parent_inspection_id": .null, "follow_up_required": .bool(false),
        ])
        let issues = state.issues.map { issue in
            JSONValue.object([
                "key": .string("plain-issue-\(issue.id.lowercased)"),
                "body": .object([
                    "client_id": .string(issue.id.lowercased), "inspection_id": .null,
                    "facility_id": .integer(Self.facilityID), "severity": .string(issue.severity.rawValue),
                    "description": .string(issue.description), "photo_path": .null,
                ]),
            ])
        }
        let uploads = zip(state.photos, photos).map { captured, file in
            JSONValue.object([
                "file": .string(file.path), "filename": .string("\(captured.photo.photoID.lowercased).png"),
                "media_type": .string("image/png"), "entity_type": .string("inspection"),
                "field_id": .string(captured.fieldID?.rawValue ?? ""),
                "key": .string("plain-photo-\(captured.photo.photoID.lowercased)"),
            ])
        }
        return JSONValue.object([
            "photos": .array(uploads), "photo_fields": .object(["39": .integer(0), "40": .integer(1)]),
            "inspection": .object(["key": .string("plain-inspection-\(state.id.lowercased)"), "body": inspection]),
            "issues": .array(issues),
        ]).serialized()
    }

    // MARK: - Processes

    /// Runs the `jqc` built beside this benchmark; answers its standard output.
    @discardableResult
    func jqc(_ arguments: [String], input: String? = nil) throws -> String {
        let jqc = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "jqc")
        return try Self.run(jqc.path, arguments, input: input)
    }

    /// Runs `executable` through the tests' `ProcessRun` (both streams read
    /// at once, so neither pipe fills); a non-zero exit fails the benchmark.
    static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
        // Long enough for the slowest run (a sync over a 200 ms link); a hung child still ends.
        let result = try ProcessRun.run(executable, arguments, input: input.map { Data($0.utf8) }, timeout: 3600)
        guard result.status == 0 else {
            throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
        return result.stdout
    }
}

/// The development server, quiet, for one side of the sync benchmark (and
/// the daemon benchmark, on the server's own fixtures when `fixtures` is nil).
final class BenchServer {
    private let process = Process()
    let baseURL: String
    let port: Int

    /// `port` 0 lets the system choose one; another starts the server again
    /// where a stopped one listened (the daemon benchmark's outage).
    init(fixtures: String?, database: String, latencyMilliseconds: Int = 0, port: Int = 0) throws {
        let portFile = database + ".port"
        try? FileManager.default.removeItem(atPath: portFile)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // The server's handler writes a response's head and body separately
        // without TCP_NODELAY, so Nagle's algorithm holds the body until the
        // client's delayed ACK (40 ms on Linux) on every request: that would
        // time the kernel, not the clients. Both sides get the same server.
        let server = Products.repositoryFile("Tools/devserver/server.py")
        let noDelay = """
            import runpy, socketserver, sys
            socketserver.StreamRequestHandler.disable_nagle_algorithm = True
            sys.argv = [sys.argv[1]] + sys.argv[2:]
            runpy.run_path(sys.argv[0], run_name="__main__")
            """
        process.arguments =
            [
                "python3", "-c", noDelay, server, "--port", "\(port)", "--port-file", portFile, "--db", database,
                "--quiet", "--exit-after", "3600",
            ] + (fixtures.map { ["--fixtures", $0] } ?? [])
            + (latencyMilliseconds > 0 ? ["--latency-ms", "\(latencyMilliseconds)"] : [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let bound = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                self.port = bound
                baseURL = "http://127.0.0.1:\(bound)/api/v1"
                return
            }
            usleep(20_000)
        }
        process.terminate()
        throw BenchError("the development server did not start (python3 Tools/devserver/server.py)")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// The repository's own files, found from this source file's place.
enum Products {
    static func repositoryFile(_ relativePath: String) -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent(relativePath).path
    }
}
