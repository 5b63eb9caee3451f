import FoundationEssentials
import Glibc
import LedgerCore
import LedgerStore

/// The ledger directory: the store, the photos, the configuration, the
/// device's signing key and the login, which together are one device's
/// ledger (`Schemas/ledger-format.md` § The ledger directory). Every path a
/// command touches inside it is named here, so its layout is stated once.
public struct LedgerDirectory: Sendable, Equatable {
    public let path: String

    /// The LMDB environment's directory (`store/`, 0700).
    public var storePath: String { file(LedgerLayout.store) }
    /// The LMDB data file: its presence is a store, whatever `config.json` says.
    public var storeDataPath: String { storePath + "/" + LedgerLayout.storeData }
    /// The LMDB lock file beside it.
    public var storeLockPath: String { storePath + "/" + LedgerLayout.storeLock }
    /// The lock a view rebuild holds exclusively and a recording command shares (`RebuildLock`).
    public var rebuildLockPath: String { storePath + "/" + LedgerLayout.rebuildLock }
    /// The photo and signature files, named by the SHA-256 of their bytes.
    public var photosPath: String { file(LedgerLayout.photos) }
    /// The device id and settings (`LedgerConfig`), written last by `create`.
    public var configPath: String { file(LedgerLayout.config) }
    /// The login's session tokens, mode 0600.
    public var credentialsPath: String { file(LedgerLayout.credentials) }
    /// The lock a token refresh holds, so two processes do not spend one refresh token.
    public var credentialsLockPath: String { file(LedgerLayout.credentialsLock) }
    /// Only after the server refused the saved session (`SessionRefusal`).
    public var sessionRefusedPath: String { file(LedgerLayout.sessionRefused) }
    /// The newest head this device committed (`StoreHead`).
    public var storeHeadPath: String { file(LedgerLayout.storeHead) }
    /// The last checkpoint this device signed (`SignedCheckpoint`), 0600.
    public var lastCheckpointPath: String { file(LedgerLayout.lastCheckpoint) }
    /// Held by a running `jqc sync`.
    public var syncLockPath: String { file(LedgerLayout.syncLock) }
    /// What a sync pass sent and had no complete answer to (`InFlightJournal`).
    public var syncInflightPath: String { file(LedgerLayout.syncInflight) }
    /// The running background sync's status (`SyncDaemonStatus`), beside the lock it holds.
    public var syncDaemonStatusPath: String { file(LedgerLayout.syncDaemonStatus) }
    /// The device's Ed25519 signing key (`DeviceKeyFile`), mode 0600.
    public var deviceKeyPath: String { file(LedgerLayout.deviceKey) }
    /// A key rotation's new key, between its writing and its event (`DeviceIdentity`).
    public var pendingDeviceKeyPath: String { file(LedgerLayout.pendingDeviceKey) }
    /// The configured C2SP witnesses and the quorum (`WitnessList`), public data, 0644.
    public var witnessesPath: String { file(LedgerLayout.witnesses) }
    /// The latest checkpoint witnesses cosigned: the device's signed note
    /// followed by each verified cosignature line (`WitnessCosigning`).
    public var cosignedCheckpointPath: String { file(LedgerLayout.cosignedCheckpoint) }
    /// Only in a copy `jqc backup` made, until a check passed (`RestorePoint`).
    public var restorePointPath: String { file(LedgerLayout.restorePoint) }
    /// `jqc salvage`'s scratch directory inside the ledger it makes.
    public var salvageScratchPath: String { file(LedgerLayout.salvageScratch) }

    private func file(_ name: String) -> String { path + "/" + name }

    public init(path: String) { self.path = path }

    /// `--ledger PATH`, else `$JQC_HOME`, else `$XDG_DATA_HOME/jqc`, else
    /// `~/.local/share/jqc`.
    public static func resolve(option: String?, environment: [String: String]) -> LedgerDirectory {
        if let option, !option.isEmpty { return LedgerDirectory(path: absolute(option, environment)) }
        if let home = environment["JQC_HOME"], !home.isEmpty {
            return LedgerDirectory(path: absolute(home, environment))
        }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return LedgerDirectory(path: xdg + "/jqc") }
        let userHome = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return LedgerDirectory(path: userHome + "/.local/share/jqc")
    }

    private static func absolute(_ path: String, _ environment: [String: String]) -> String {
        if path.hasPrefix("/") { return path }
        if path == "~" || path.hasPrefix("~/") {
            return (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + path.dropFirst()
        }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Whether a ledger was made here (`jqc init` writes `config.json` last).
    public var exists: Bool { FileManager.default.fileExists(atPath: configPath) }

    /// Fails with "permission denied" when the ledger exists but this user
    /// may not read it: otherwise an unreadable directory looks like no
    /// ledger at all. Fails too when `config.json` is not a regular file
    /// (`checkConfigFile`).
    public func checkReadable() throws {
        try ReadOnlyOpening.checkReadable([path, configPath, storePath, storeDataPath])
        try checkConfigFile()
    }

    /// Fails with `LedgerDirectoryError.configNotAFile` when something other
    /// than a regular file (a directory, a named pipe, a socket, a device)
    /// stands where `config.json` goes: it is neither a ledger nor a place
    /// `jqc init` may create one, and reading a pipe would wait forever.
    public func checkConfigFile() throws(LedgerDirectoryError) {
        var info = stat()
        guard stat(configPath, &info) == 0 else { return }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: kind = "a directory"
        case S_IFIFO: kind = "a named pipe"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR, S_IFBLK: kind = "a device"
        default: kind = "not a regular file"
        }
        throw .configNotAFile(
            path: configPath, kind: kind, storeExists: FileManager.default.fileExists(atPath: storeDataPath))
    }

    /// Fails unless a ledger was made here: `config.json` not a regular file
    /// (`checkConfigFile`), or no `config.json` at all (`noLedger`).
    public func requireLedger() throws(LedgerDirectoryError) {
        try checkConfigFile()
        guard exists else { throw .noLedger(path) }
    }

    /// A decoding failure in a few words, without the decoder's debug dump.
    public static func reason(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : " at \"\(path.map(\.stringValue).joined(separator: "."))\""
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "it is not valid JSON" : "the value\(at(context.codingPath)) is not usable"
        case .keyNotFound(let key, _):
            return "it has no \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "the value\(at(context.codingPath)) has the wrong type"
        @unknown default:
            return "it cannot be decoded"
        }
    }
}

/// What `jqc init` writes to `config.json`: no secrets, so it is readable
/// like any configuration file.
public struct LedgerConfig: Codable, Sendable, Equatable {
    /// The device id recorded in every event from this ledger.
    public var deviceID: UUID
    /// The server's base URL (including `/api/v1`), if any.
    public var serverURL: String?
    /// A CA bundle to trust in addition to the system's (verification is never turned off).
    public var caBundle: String?
    public var createdAt: String
    /// The base URL of a witness of the log's history (the witness protocol
    /// of `Schemas/ledger-format.md`), if one is configured; none by default,
    /// and then a sync sends nothing outside the server's contract.
    public var witnessURL: String?
    /// The offline actor's name, used when nobody is logged in and no
    /// `--as NAME` or `JQC_ACTOR` is given.
    public var actor: String?

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case serverURL = "server_url"
        case caBundle = "ca_bundle"
        case createdAt = "created_at"
        case witnessURL = "witness_url"
        case actor
    }

    public init(
        deviceID: UUID, serverURL: String?, caBundle: String? = nil, witnessURL: String? = nil, createdAt: Timestamp
    ) {
        self.deviceID = deviceID
        self.serverURL = serverURL
        self.caBundle = caBundle
        self.witnessURL = witnessURL
        self.createdAt = createdAt.iso8601
    }

    /// The configuration `jqc init` wrote in `directory`.
    public static func load(_ directory: LedgerDirectory) throws -> LedgerConfig {
        try directory.checkConfigFile()
        guard let data = FileManager.default.contents(atPath: directory.configPath) else {
            throw LedgerDirectoryError.noLedger(directory.path)
        }
        do {
            return try JSONDecoder().decode(LedgerConfig.self, from: data)
        } catch let error as DecodingError {
            throw LedgerDirectoryError.damagedConfig(path: directory.configPath, why: LedgerDirectory.reason(error))
        } catch {
            throw LedgerDirectoryError.damagedConfig(path: directory.configPath, why: "it cannot be decoded")
        }
    }

    /// Writes the configuration durably into `directory`.
    public func save(_ directory: LedgerDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try FileStore.writeAtomically(try encoder.encode(self), to: directory.configPath, mode: 0o644)
    }
}

/// Why the ledger directory, as opposed to its store, cannot be used.
public enum LedgerDirectoryError: Error, Equatable, CustomStringConvertible {
    /// No `config.json`: no ledger was made here.
    case noLedger(String)
    /// `config.json` is there but cannot be read as a configuration.
    case damagedConfig(path: String, why: String)
    /// A directory cannot be made because `blocking` (it, or a parent) is a file.
    case notADirectory(path: String, blocking: String)
    /// Making a directory failed for another reason (errno).
    case cannotCreate(path: String, code: Int32)
    /// Something other than a regular file (`kind`: "a directory", …) is
    /// where `config.json` goes; `storeExists` when `store/data.mdb` is there.
    case configNotAFile(path: String, kind: String, storeExists: Bool)
    /// `create` found a ledger already there.
    case ledgerExists(String)
    /// `create` found a store (`store/data.mdb`) but no `config.json` beside it.
    case storeWithoutConfig(store: String, config: String)

    public var description: String {
        switch self {
        case .noLedger(let path):
            "no ledger at \(path). Create one with 'jqc init', or point to one with --ledger PATH or JQC_HOME."
        case .damagedConfig(let path, let why):
            "\(path) is damaged: \(why). It holds this device's id: restore it from a backup (see 'jqc backup'); "
                + "the log itself was not touched."
        case .notADirectory(let path, let blocking):
            blocking == path
                ? "\(path) exists and is a file, not a directory; nothing was created. Point --ledger, JQC_HOME or "
                    + "XDG_DATA_HOME at a directory."
                : "\(path) cannot be created: \(blocking) is a file, not a directory; nothing was created. Point "
                    + "--ledger, JQC_HOME or XDG_DATA_HOME at a directory."
        case .cannotCreate(let path, let code):
            "creating \(path) failed: \(String(cString: strerror(code)))"
        case .configNotAFile(let path, let kind, let storeExists):
            "\(path) is \(kind), not the ledger's configuration file, so jqc cannot use this ledger and 'jqc init' "
                + "cannot make one here; nothing was changed. Move it away (mv '\(path)' '\(path).moved'), then "
                + (storeExists
                    ? "restore config.json from a backup (see 'jqc backup'): it holds this device's id, and the store "
                        + "beside it is this device's log."
                    : "run 'jqc init' to create the ledger.")
        case .ledgerExists(let path):
            "a ledger already exists at \(path); nothing was changed. Use it as it is, or pass --ledger PATH for another."
        case .storeWithoutConfig(let store, let config):
            "\(store) already holds a store but \(config) is missing; nothing was changed. "
                + "Restore config.json from a backup, or move the store away to start a new ledger."
        }
    }
}

/// Small file operations with the guarantees the ledger needs.
public enum FileStore {
    public static func writeAtomically(_ data: Data, to path: String, mode: mode_t) throws {
        try DurableFile.write(data, to: path, mode: mode)
    }

    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws {
        var isDirectory = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory else {
                throw LedgerDirectoryError.notADirectory(path: path, blocking: path)
            }
            return
        }
        // The nearest existing ancestor must be a directory: say which one is
        // a file instead of the operating system's "not a directory".
        var ancestor = PathText.parent(path)
        while !ancestor.isEmpty && ancestor != "/" {
            if FileManager.default.fileExists(atPath: ancestor, isDirectory: &isDirectory) {
                guard isDirectory else {
                    throw LedgerDirectoryError.notADirectory(path: path, blocking: ancestor)
                }
                break
            }
            ancestor = PathText.parent(ancestor)
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
        } catch {
            let code = errno
            if code == ENOSPC || code == EDQUOT {
                throw LedgerError.noSpace(path: path, freeBytes: LedgerError.freeSpace(at: path))
            }
            throw LedgerDirectoryError.cannotCreate(path: path, code: code == 0 ? EIO : code)
        }
    }
}
