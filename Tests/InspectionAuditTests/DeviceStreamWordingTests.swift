import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

/// `jqc log`'s words for the events of a device's own stream, which the
/// inspection fold keeps as `unrecognized`: never "a type this jqc does not know".
@Suite struct DeviceStreamWordingTests {
    static let device = UUID(uuidString: "0190f6e2-0000-7000-8000-00000000d001")!
    static let key =
        "jqc/0190f6e2-0000-7000-8000-00000000d001+1a2b3c4d+AXNhbXBsZSBwdWJsaWMga2V5IGJ5dGVzIGZvciB0ZXN0cyE="

    static func stored(_ type: String, _ pairs: [(String, CBORValue)], version: Int = 1) -> InspectionEvent {
        .unrecognized(StoredPayload(type: type, schemaVersion: version, payload: CBORValue.textMap(pairs).encoded()))
    }

    static let cases: [(InspectionEvent, String)] = [
        (
            stored("device.key_published", [("algorithm", .text("ed25519")), ("key", .text(key))]),
            "published the device's signing key: ed25519 key 1a2b3c4d (\(key))"
        ),
        (
            stored(
                "device.key_published",
                [("algorithm", .text("ed25519")), ("key", .text(key)), ("endorsement", .text("jqc key rotation\n"))]),
            "rotated the device's signing key to ed25519 key 1a2b3c4d, endorsed by the previous key"
        ),
        (
            stored(
                "device.key_published",
                [("algorithm", .text("ed25519")), ("key", .text(key)), ("previous_key_lost", .bool(true))]),
            "rotated the device's signing key to ed25519 key 1a2b3c4d; the previous key was declared lost"
        ),
        (
            stored(
                "sync.checkpoint_witnessed",
                [
                    ("server", .text("https://qc.example/api/v1")), ("outcome", .text("acknowledged")),
                    ("size", .unsigned(42)),
                ]),
            "the witness at https://qc.example/api/v1 acknowledged the device's checkpoint of 42 records"
        ),
        (
            stored(
                "sync.checkpoint_witnessed",
                [
                    ("server", .text("https://qc.example/api/v1")), ("outcome", .text("refused")),
                    ("message", .text("HTTP 409: not an extension")),
                ]),
            "the witness at https://qc.example/api/v1 refused the device's checkpoint (it does not extend the one "
                + "the witness holds): HTTP 409: not an extension"
        ),
        (
            stored(
                "sync.checkpoint_witnessed",
                [
                    ("server", .text("https://qc.example/api/v1")), ("outcome", .text("unsupported")),
                    ("message", .text("HTTP 404")),
                ]),
            "the server https://qc.example/api/v1 offers no witness, so the history was not witnessed: HTTP 404"
        ),
        (
            stored(
                "sync.checkpoint_witnessed",
                [
                    ("server", .text("https://qc.example/api/v1")), ("outcome", .text("wrong_answer")),
                    ("message", .text("size 999999")),
                ]),
            "the witness at https://qc.example/api/v1 answered with another checkpoint than the one sent: size 999999"
        ),
        (
            stored("sync.checkpoint_witnessed", [("outcome", .text("acknowledged"))]),
            "a sync.checkpoint_witnessed event of version 1 whose payload this jqc cannot read (22 payload bytes)"
        ),
        (
            stored("device.key_published", [("algorithm", .text("ed25519")), ("key", .text(key))], version: 2),
            "a device.key_published event of version 2 whose payload this jqc cannot read (123 payload bytes)"
        ),
        (
            stored(
                "checkpoint.cosigned",
                [
                    ("witness", .text("witness.example/w1")), ("key_id", .text("0a1b2c3d")),
                    ("timestamp", .unsigned(1_700_000_000)), ("size", .unsigned(42)), ("root", .text("AAEC")),
                ]),
            "the witness witness.example/w1 (key 0a1b2c3d) cosigned the device's checkpoint of 42 records (root AAEC) "
                + "at 2023-11-14T22:13:20.000000Z, its cosignature verified against its configured key"
        ),
        (
            stored(
                "device.key_pinned",
                [
                    ("device", .text(device.lowercased)), ("public_key", .text(key)), ("key_id", .text("1a2b3c4d")),
                    ("file_sha256", .text(String(repeating: "ab", count: 32))),
                ]),
            "pinned the key 1a2b3c4d of device 0190f6e2…: its later files must be signed by it or carry a rotation "
                + "it endorsed"
        ),
        (
            stored(
                "device.fork_seen",
                [
                    ("device", .text(device.lowercased)),
                    ("first", .textMap([("size", .unsigned(8)), ("root", .text("AAEC")), ("note", .text("n"))])),
                    ("second", .textMap([("size", .unsigned(8)), ("root", .text("AwQF")), ("note", .text("m"))])),
                ]),
            "saw two histories of device 0190f6e2…: a checkpoint of 8 records with root AAEC and one of 8 records "
                + "with root AwQF, both signed by its key (FORKED)"
        ),
    ]

    @Test(arguments: cases)
    func everyDeviceStreamEventIsWorded(event: InspectionEvent, words: String) {
        let said = EventWording.describe(event, stream: Self.device, template: nil)
        #expect(said == words)
        #expect(!said.contains("does not know"))
    }
}
