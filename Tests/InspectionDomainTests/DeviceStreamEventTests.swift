import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// The events of a device's own stream, typed: each encodes to the bytes the
/// log has always held for it and reads back as written.
@Suite struct DeviceStreamEventTests {
    static let device = UUID(uuidString: "0190f6e2-0000-7000-8000-00000000d001")!
    static let key =
        "jqc/0190f6e2-0000-7000-8000-00000000d001+1a2b3c4d+AQcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH"

    /// One event of every type, optional keys both present and absent, each
    /// with the payload spelled as its writers spelled it before the typed
    /// encoder (`DeviceIdentity`, `CheckpointWitness`).
    static func everyEvent() -> [(DeviceStreamEvent, [(String, CBORValue)])] {
        [
            (
                .keyPublished(.init(key: key)), [("algorithm", .text("ed25519")), ("key", .text(key))]
            ),
            (
                .keyPublished(.init(key: key, endorsement: "jqc key rotation\nname\nkey\n\n— sig\n")),
                [
                    ("algorithm", .text("ed25519")), ("key", .text(key)),
                    ("endorsement", .text("jqc key rotation\nname\nkey\n\n— sig\n")),
                ]
            ),
            (
                .keyPublished(.init(key: key, previousKeyLost: true)),
                [("algorithm", .text("ed25519")), ("key", .text(key)), ("previous_key_lost", .bool(true))]
            ),
            (
                .checkpointWitnessed(
                    .init(outcome: "acknowledged", server: "https://qc.example/api/v1", size: 42, root: "AAEC")),
                [
                    ("server", .text("https://qc.example/api/v1")), ("outcome", .text("acknowledged")),
                    ("size", .unsigned(42)), ("root", .text("AAEC")),
                ]
            ),
            (
                .checkpointWitnessed(
                    .init(outcome: "refused", server: "https://qc.example/api/v1", message: "HTTP 409")),
                [
                    ("server", .text("https://qc.example/api/v1")), ("outcome", .text("refused")),
                    ("message", .text("HTTP 409")),
                ]
            ),
            (
                .checkpointCosigned(
                    .init(
                        witness: "witness.example/w1", keyID: "0a1b2c3d", timestamp: 1_700_000_000, size: 42,
                        root: "AAEC")),
                [
                    ("witness", .text("witness.example/w1")), ("key_id", .text("0a1b2c3d")),
                    ("timestamp", .unsigned(1_700_000_000)), ("size", .unsigned(42)), ("root", .text("AAEC")),
                ]
            ),
            (
                .keyPinned(.init(device: device, publicKey: key, keyID: "1a2b3c4d", fileSHA256: fileSHA256)),
                [
                    ("device", .text(device.lowercased)), ("public_key", .text(key)), ("key_id", .text("1a2b3c4d")),
                    ("file_sha256", .text(fileSHA256.hex)),
                ]
            ),
            (
                .forkSeen(
                    .init(
                        device: device, first: .init(size: 8, root: "AAEC", note: "jqc/d\n8\nAAEC\n\n— s\n"),
                        second: .init(size: 7, root: "AwQF", note: "jqc/d\n7\nAwQF\n\n— s\n"))),
                [
                    ("device", .text(device.lowercased)),
                    (
                        "first",
                        .textMap([
                            ("size", .unsigned(8)), ("root", .text("AAEC")), ("note", .text("jqc/d\n8\nAAEC\n\n— s\n")),
                        ])
                    ),
                    (
                        "second",
                        .textMap([
                            ("size", .unsigned(7)), ("root", .text("AwQF")), ("note", .text("jqc/d\n7\nAwQF\n\n— s\n")),
                        ])
                    ),
                ]
            ),
        ]
    }

    static let fileSHA256 = SHA256Hasher().digest(Array("a handover file".utf8))

    @Test func coversEveryType() {
        #expect(Set(Self.everyEvent().map(\.0.eventType)) == Set(DeviceStreamEventType.allCases))
    }

    @Test(arguments: everyEvent().indices)
    func encodesTheBytesItsWritersWroteAndReadsThemBack(_ index: Int) throws {
        let (event, spelled) = Self.everyEvent()[index]
        let payload = event.payloadCBOR()
        #expect(payload == CBORValue.textMap(spelled).encoded(), "\(event)")
        let decoded = try DeviceStreamEvent.decode(
            type: event.eventType.rawValue, schemaVersion: event.eventType.schemaVersion, payload: payload)
        #expect(decoded == event)
        let pending = event.pending(
            device: Self.device, actor: SampleEvents.actor, recordedAt: Timestamp(microsecondsSinceEpoch: 1))
        #expect(pending.stream == Self.device && pending.type == event.eventType.rawValue)
        #expect(pending.payload == payload && pending.schemaVersion == 1)
    }

    /// Exported as `jqc --json log` prints them and checked by
    /// `Tools/validate-events` against `Schemas/events/`.
    @Test func everySampleMatchesItsSchema() throws {
        let directory = TemporaryDirectory(prefix: "device-stream-schemas")
        let lines = Self.everyEvent().enumerated().map { index, sample in
            let pending = sample.0.pending(
                device: Self.device, actor: SampleEvents.actor,
                recordedAt: Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000 + Int64(index)))
            let record = EventRecord(position: UInt64(index + 1), streamVersion: UInt64(index + 1), event: pending)
            let stored = StoredPayload(
                type: pending.type, schemaVersion: pending.schemaVersion, payload: pending.payload)
            return EventExport.jsonLine(for: record, event: .unrecognized(stored))
        }
        let file = directory.appending("events.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/validate-events"), file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: \(lines.count) events valid"))
    }

    @Test func anotherStreamsTypeIsNotOne() throws {
        #expect(try DeviceStreamEvent.decode(type: "inspection.started", schemaVersion: 1, payload: [0xA0]) == nil)
    }

    static let refused: [(String, Int, [(String, CBORValue)], String)] = [
        ("device.key_published", 1, [("algorithm", .text("ed25519"))], "the key \"key\" is missing"),
        ("device.key_published", 2, [("algorithm", .text("ed25519")), ("key", .text(key))], "version 2"),
        ("sync.checkpoint_witnessed", 1, [("outcome", .text("refused"))], "the key \"server\" is missing"),
        (
            "sync.checkpoint_witnessed", 1,
            [("outcome", .text("acknowledged")), ("server", .text("s")), ("size", .integer(-1))], "negative"
        ),
        (
            "device.key_pinned", 1,
            [("device", .text(device.lowercased)), ("public_key", .text(key)), ("key_id", .text("1a2b3c4d"))],
            "the key \"file_sha256\" is missing"
        ),
        (
            "device.fork_seen", 1,
            [
                ("device", .text(device.lowercased)),
                ("first", .textMap([("size", .integer(-1)), ("root", .text("A")), ("note", .text("n"))])),
                ("second", .textMap([("size", .unsigned(1)), ("root", .text("A")), ("note", .text("n"))])),
            ], "\"first.size\" is negative"
        ),
        ("device.fork_seen", 1, [("device", .text(device.lowercased))], "the key \"first\" is missing"),
    ]

    @Test(arguments: refused.indices)
    func aPayloadOutsideItsSchemaIsRefusedSayingWhy(_ index: Int) {
        let (type, version, pairs, reason) = Self.refused[index]
        let error = #expect(throws: DomainError.self) {
            try DeviceStreamEvent.decode(
                type: type, schemaVersion: version, payload: CBORValue.textMap(pairs).encoded())
        }
        #expect(error.map { "\($0)".contains(reason) } == true, "\(String(describing: error))")
        #expect(DeviceStreamEvent(StoredPayload(type: type, schemaVersion: version, payload: [0xA0])) == nil)
    }
}
