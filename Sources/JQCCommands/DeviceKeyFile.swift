import Foundation
import LedgerCore
import LedgerStore

/// The device's Ed25519 signing key: `device.key` in the ledger directory
/// (mode 0600, never in the log), in the signed-note signer-key encoding. Its
/// public half is recorded in the log as a `device.key_published` event in
/// the device's own stream (the device id), so the log says which key signs it.
enum DeviceKeyFile {
    static let eventType = "device.key_published"

    static func path(_ home: LedgerHome) -> String { home.path + "/device.key" }

    /// The key name and checkpoint origin: `jqc/<device id>`.
    static func name(_ deviceID: UUID) -> String { "jqc/\(deviceID.lowercased)" }

    /// The stored key, or nil when the ledger has none yet.
    static func load(_ home: LedgerHome) throws -> NoteKey? {
        let path = path(home)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DeviceKeyError.unreadable(path: path, "it cannot be read (permissions?)")
        }
        do {
            return try NoteKey(parsing: String(decoding: data, as: UTF8.self))
        } catch {
            throw DeviceKeyError.unreadable(path: path, "\(error)")
        }
    }

    /// Makes the key file (at `jqc init`; its public key is recorded in the
    /// log when it first signs, so a new ledger's log starts empty).
    @discardableResult
    static func create(_ home: LedgerHome, device: UUID) throws -> NoteKey {
        let key = try NoteKey.generate(name: name(device))
        try FileStore.writeAtomically(Data((key.signerKey! + "\n").utf8), to: path(home), mode: 0o600)
        return key
    }

    /// The device's key, made first if the ledger has none (a ledger made
    /// before keys), and its public key recorded in the log if it is not yet.
    static func ensure(_ invocation: Invocation) throws -> NoteKey {
        let config = try invocation.config()
        let log = try invocation.log()
        let key = try load(invocation.home) ?? create(invocation.home, device: config.deviceID)
        if try publishedKey(in: log, device: config.deviceID) != key.verifierKey {
            let payload = CBORValue.textMap([("algorithm", .text("ed25519")), ("key", .text(key.verifierKey))])
            try log.append([
                PendingEvent(
                    stream: config.deviceID, type: eventType, schemaVersion: 1,
                    actor: Actor(id: "device:\(config.deviceID.lowercased)", name: "jqc", verified: true),
                    device: config.deviceID, recordedAt: invocation.clock.now(), payload: payload.encoded())
            ])
        }
        return key
    }

    /// `ensure`, without opening the store for writing when the key file exists
    /// and the log already records it (so a read-only copy can still sign
    /// and prove). Leaves no log open.
    static func ensureReadOnly(_ invocation: Invocation) throws -> NoteKey {
        if let key = try load(invocation.home) {
            let config = try invocation.config()
            let auditor = try invocation.auditorLedger(views: false)
            defer { auditor.close() }
            if try publishedKey(in: auditor.log, device: config.deviceID) == key.verifierKey { return key }
        }
        let key = try ensure(invocation)
        invocation.closeLog()
        return key
    }

    /// The verifier key the log last recorded for the device, read through
    /// the device's stream (a few records, not a scan of the log).
    static func publishedKey(in log: EventLog, device: UUID) throws -> String? {
        try log.read { reader in try publishedRecord(reader, device: device)?.key }
    }

    static func publishedRecord(_ reader: LedgerReader, device: UUID) throws -> (key: String, record: EventRecord)? {
        try publishedRecords(reader, device: device).last
    }

    /// Every key the device's stream has published, oldest first.
    static func publishedRecords(_ reader: LedgerReader, device: UUID) throws -> [(key: String, record: EventRecord)] {
        var found: [(String, EventRecord)] = []
        for record in try reader.records(inStream: device) where record.type == eventType {
            var cbor = CBORReader(record.payload)
            guard let text = try cbor.readValue()["key"]?.textValue else { continue }
            found.append((text, record))
        }
        return found
    }
}

/// The device key could not be used.
enum DeviceKeyError: Error, CustomStringConvertible {
    case unreadable(path: String, String)
    case notPublished(device: UUID)

    var description: String {
        switch self {
        case .unreadable(let path, let why):
            "the device key \(path) is not usable: \(why). Restore it from a backup; a new key cannot sign for old checkpoints."
        case .notPublished(let device):
            "the log records no signing key for device \(device.lowercased): run 'jqc checkpoint' on the device first."
        }
    }
}
