import Foundation
import LedgerCore
import LedgerStore

/// The ledger directory: where the log, the photos, the configuration and the
/// credentials live (see Schemas/ledger-format.md).
public struct LedgerHome: Sendable {
    public let path: String

    public var storePath: String { path + "/store" }
    public var photosPath: String { path + "/photos" }
    public var configPath: String { path + "/config.json" }
    public var credentialsPath: String { path + "/credentials.json" }
    public var syncLockPath: String { path + "/sync.lock" }

    public init(path: String) { self.path = path }

    /// `--ledger PATH`, else `$JQC_HOME`, else `$XDG_DATA_HOME/jqc`, else
    /// `~/.local/share/jqc`.
    public static func resolve(option: String?, environment: [String: String]) -> LedgerHome {
        if let option, !option.isEmpty { return LedgerHome(path: absolute(option, environment)) }
        if let home = environment["JQC_HOME"], !home.isEmpty { return LedgerHome(path: absolute(home, environment)) }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return LedgerHome(path: xdg + "/jqc") }
        let userHome = environment["HOME"] ?? NSHomeDirectory()
        return LedgerHome(path: userHome + "/.local/share/jqc")
    }

    private static func absolute(_ path: String, _ environment: [String: String]) -> String {
        if path.hasPrefix("/") { return path }
        if path == "~" || path.hasPrefix("~/") { return (environment["HOME"] ?? NSHomeDirectory()) + path.dropFirst() }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    public var exists: Bool { FileManager.default.fileExists(atPath: configPath) }
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

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case serverURL = "server_url"
        case caBundle = "ca_bundle"
        case createdAt = "created_at"
    }

    public init(deviceID: UUID, serverURL: String?, caBundle: String? = nil, createdAt: Timestamp) {
        self.deviceID = deviceID
        self.serverURL = serverURL
        self.caBundle = caBundle
        self.createdAt = createdAt.iso8601
    }

    static func load(_ home: LedgerHome) throws -> LedgerConfig {
        guard let data = FileManager.default.contents(atPath: home.configPath) else {
            throw JQCError.noLedger(home.path)
        }
        do {
            return try JSONDecoder().decode(LedgerConfig.self, from: data)
        } catch let error as DecodingError {
            throw StoreMessage.damagedConfig(path: home.configPath, why: StoreMessage.reason(error))
        } catch {
            throw StoreMessage.damagedConfig(path: home.configPath, why: "it cannot be decoded")
        }
    }

    func save(_ home: LedgerHome) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try FileStore.writeAtomically(try encoder.encode(self), to: home.configPath, mode: 0o644)
    }
}

/// Small file operations with the guarantees the ledger needs.
enum FileStore {
    static func writeAtomically(_ data: Data, to path: String, mode: mode_t) throws {
        try DurableFile.write(data, to: path, mode: mode)
    }

    static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw StoreMessage.notADirectory(path: path, blocking: path) }
            return
        }
        // The nearest existing ancestor must be a directory: say which one is
        // a file instead of the operating system's "not a directory".
        var ancestor = (path as NSString).deletingLastPathComponent
        while !ancestor.isEmpty && ancestor != "/" {
            if FileManager.default.fileExists(atPath: ancestor, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { throw StoreMessage.notADirectory(path: path, blocking: ancestor) }
                break
            }
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
        } catch {
            let code = errno
            if code == ENOSPC || code == EDQUOT {
                throw LedgerError.noSpace(path: path, freeBytes: LedgerError.freeSpace(at: path))
            }
            throw JQCError.io("creating \(path)", code == 0 ? EIO : code)
        }
    }
}
