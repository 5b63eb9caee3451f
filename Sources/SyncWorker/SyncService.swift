import Foundation
import InspectionStore

/// The background sync as a systemd user service: the unit `jqc sync
/// --daemon` runs under, where it is installed, and what the user manager
/// says of it. `jqc service install|status|uninstall` and `jqc status` use it;
/// `Tools/install` and the .deb ship the same unit (`jqc service unit`).
public struct SyncService: Sendable {
    public static let unitName = "jqc-sync.service"
    /// Where packages and `Tools/install` put the unit for every user.
    public static let sharedUnitDirectories = ["/usr/lib/systemd/user", "/usr/local/lib/systemd/user"]

    public let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    /// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
    public var userUnitDirectory: String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/systemd/user" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/systemd/user"
    }

    public var userUnitPath: String { userUnitDirectory + "/" + Self.unitName }

    /// The unit file in force: the user's own, else a shared one; nil when none is installed.
    public var installedUnitPath: String? {
        ([userUnitDirectory] + Self.sharedUnitDirectories).map { $0 + "/" + Self.unitName }.first {
            FileManager.default.fileExists(atPath: $0)
        }
    }

    /// The unit running `executable sync --daemon`, on `ledger` when given
    /// (else the default ledger of the user it runs for).
    public static func unit(executable: String, ledger: String?) -> String {
        var lines = [
            "# Written by jqc: the background sync of an inspection ledger (jqc help service).",
            "[Unit]",
            "Description=jqc: send the inspection ledger's outbox to the server in the background",
            "Documentation=man:jqc(1)",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=\(quoted(executable)) sync --daemon",
        ]
        if let ledger { lines.append("Environment=\(quoted("JQC_HOME=" + ledger))") }
        lines += [
            // The daemon waits through offline stretches and refused sessions by
            // itself; it exits only on SIGTERM or a fault of the ledger, restarted then.
            "Restart=on-failure",
            "RestartSec=30",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// A word systemd reads as one argument: quoted when it holds a space, `"` or `\`.
    public static func quoted(_ word: String) -> String {
        guard word.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "%" }) else { return word }
        let escaped = word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "%", with: "%%")
        return "\"" + escaped + "\""
    }

    // MARK: - The user manager

    /// The `systemctl` to ask (`JQC_SYSTEMCTL` replaces it in tests), nil when there is none.
    public var systemctl: String? {
        if let given = environment["JQC_SYSTEMCTL"], !given.isEmpty { return given }
        return ["/usr/bin/systemctl", "/bin/systemctl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `systemctl --user ARGUMENTS`: its exit status and output, nil without systemctl.
    public func userManager(_ arguments: [String]) -> (status: Int32, output: String)? {
        guard let systemctl else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemctl)
        process.arguments = ["--user"] + arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Whether a user manager answers (`systemctl --user show-environment`).
    public var hasUserManager: Bool { userManager(["show-environment"])?.status == 0 }

    /// What the service is doing, in a word and a line.
    public enum State: Equatable, Sendable {
        /// Installed and running (`active`), or the manager's other word (`inactive`, `failed`, …).
        case running(unit: String, word: String)
        /// The unit file is there, but no user manager can be asked (no session bus).
        case noUserManager(unit: String)
        case notInstalled

        public var word: String {
            switch self {
            case .running(_, let word): word
            case .noUserManager: "installed, no user manager"
            case .notInstalled: "not installed"
            }
        }

        public var unitPath: String? {
            switch self {
            case .running(let unit, _), .noUserManager(let unit): unit
            case .notInstalled: nil
            }
        }

        public var line: String {
            switch self {
            case .running(let unit, "active"):
                "running (\(unit)); what it did: journalctl --user -u \(SyncService.unitName)"
            case .running(let unit, let word):
                "\(word) (\(unit)); start it with 'systemctl --user enable --now \(SyncService.unitName)', "
                    + "see why with 'journalctl --user -u \(SyncService.unitName)'"
            case .noUserManager(let unit):
                "installed (\(unit)) but no systemd user manager answers; start it from your session with "
                    + "'systemctl --user enable --now \(SyncService.unitName)', or run 'jqc sync --daemon'"
            case .notInstalled:
                "not installed: nothing syncs by itself; 'jqc service install' syncs in the background"
            }
        }
    }

    /// What the service is doing: the unit in force and what the user manager says of it.
    public func state() -> State {
        guard let unit = installedUnitPath else { return .notInstalled }
        guard let answer = userManager(["is-active", Self.unitName]), hasUserManager else {
            return .noUserManager(unit: unit)
        }
        let word = answer.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return .running(unit: unit, word: word.isEmpty ? "unknown" : String(word.prefix(40)))
    }
}
