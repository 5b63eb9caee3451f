import FoundationEssentials
import InspectionStore
import LedgerCore
import LedgerStore

/// The background sync as a systemd user service: the unit `jqc sync
/// --daemon` runs under, where it is installed, and what the user manager
/// says of it. `jqc service install|status|uninstall` and `jqc status` use it;
/// `Tools/install` and the .deb ship the same unit (`jqc service unit`).
public struct SyncServiceUnit: Sendable {
    public static let unitName = "jqc-sync.service"
    /// Where packages and `Tools/install` put the unit for every user.
    public static let sharedUnitDirectories = ["/usr/lib/systemd/user", "/usr/local/lib/systemd/user"]

    public let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    /// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
    public var userUnitDirectory: String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/systemd/user" }
        return (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.config/systemd/user"
    }

    public var userUnitPath: String { userUnitDirectory + "/" + Self.unitName }

    /// The unit file in force: the user's own, else a shared one; nil when none is installed.
    public var installedUnitPath: String? {
        ([userUnitDirectory] + Self.sharedUnitDirectories).map { $0 + "/" + Self.unitName }.first {
            FileManager.default.fileExists(atPath: $0)
        }
    }

    /// The unit running `executable sync --daemon`, on `ledger` when given
    /// (else the default ledger of the user it runs for). Each value is
    /// quoted and escaped for systemd (`word`), so no path can end a line or
    /// add a setting; a value systemd cannot be given exactly is refused
    /// (`UnitRefusal`).
    public static func unit(executable: String, ledger: String?) throws(UnitRefusal) -> String {
        try refuseUnnameable(executable, what: "the jqc to run", isExecutable: true)
        if let ledger { try refuseUnnameable(ledger, what: "the ledger's path", isExecutable: false) }
        var lines = [
            "# Written by jqc: the background sync of an inspection ledger (jqc help service).",
            "[Unit]",
            "Description=jqc: send the inspection ledger's outbox to the server in the background",
            "Documentation=man:jqc(1)",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=\(word(executable)) sync --daemon",
        ]
        if let ledger { lines.append("Environment=\(word("JQC_HOME=" + ledger))") }
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

    /// Why a unit was not written: a value it would hold cannot be given to
    /// systemd exactly.
    public struct UnitRefusal: Error, CustomStringConvertible, Equatable {
        /// What the value is ("the ledger's path").
        public var what: String
        public var value: String
        public var why: String
        public var advice: String
        public var description: String {
            "cannot write \(SyncServiceUnit.unitName): \(what) \(TerminalText.singleLine(value)) \(why); nothing was "
                + "written. \(advice)"
        }
    }

    /// Refuses what no unit can name exactly. Text holding U+FFFD is how a
    /// name's bytes that are not UTF-8 reach jqc: the unit would name another
    /// file, and systemd reads only UTF-8. systemd also refuses an executable
    /// whose name holds a quote, a backslash or a control character ("Executable
    /// name contains special characters"), however it is escaped.
    static func refuseUnnameable(_ text: String, what: String, isExecutable: Bool) throws(UnitRefusal) {
        let elsewhere =
            isExecutable
            ? "Install jqc under a path without them (such as /usr/local/bin/jqc) and run 'jqc service install' with "
                + "that jqc, or keep 'jqc sync --daemon' running yourself."
            : "Move the ledger to a path whose name is UTF-8 text, or keep 'jqc sync --daemon' running yourself."
        if text.unicodeScalars.contains("\u{FFFD}") {
            throw UnitRefusal(
                what: what, value: text,
                why: "holds bytes that are not UTF-8 (shown as U+FFFD), which a unit file cannot name",
                advice: elsewhere)
        }
        if isExecutable,
            text.unicodeScalars.contains(where: {
                "\"'\\".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F
            })
        {
            throw UnitRefusal(
                what: what, value: text,
                why: "holds a quote, a backslash or a control character, which systemd refuses in an executable's name",
                advice: elsewhere)
        }
    }

    /// A word systemd reads back as exactly `text` (systemd.syntax(7)):
    /// written as it is when every character is one of `[A-Za-z0-9/._+,:=@-]`,
    /// else in double quotes with `\` and `"` backslash-escaped and a tab,
    /// newline or other control character (and the C1 and bidi characters
    /// `TerminalText` escapes) as a C escape (`\x0a`, `\u0085`), so no line
    /// of the value can become a line of the unit; `%` is always `%%`
    /// (specifiers are expanded inside quotes too). `$` is kept: neither
    /// `Environment=` nor an executable's name expands variables.
    public static func word(_ text: String) -> String {
        var escaped = ""
        var plain = !text.isEmpty
        for scalar in text.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "/", ".", "_", "+", ",", ":", "=", "@", "-":
                escaped.unicodeScalars.append(scalar)
                continue
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "%": escaped += "%%"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: escaped += "\\x" + hex(scalar, digits: 2)
            case _ where TerminalText.needsEscape(scalar): escaped += "\\u" + hex(scalar, digits: 4)
            default: escaped.unicodeScalars.append(scalar)
            }
            plain = false
        }
        return plain ? escaped : "\"" + escaped + "\""
    }

    private static func hex(_ scalar: Unicode.Scalar, digits: Int) -> String {
        let hex = String(scalar.value, radix: 16)
        return String(repeating: "0", count: max(0, digits - hex.count)) + hex
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
        let ending: ChildProcess.Ending
        do {
            ending = try ChildProcess.run(
                systemctl, arguments: ["--user"] + arguments, environment: environment, output: .capturedTogether)
        } catch {
            return nil
        }
        // Foundation's Process gave a signal's number as the status; so does this.
        return (ending.status ?? ending.signal ?? 1, String(decoding: ending.output, as: UTF8.self))
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
                "running (\(unit)); what it did: journalctl --user -u \(SyncServiceUnit.unitName)"
            case .running(let unit, let word):
                "\(word) (\(unit)); start it with 'systemctl --user enable --now \(SyncServiceUnit.unitName)', "
                    + "see why with 'journalctl --user -u \(SyncServiceUnit.unitName)'"
            case .noUserManager(let unit):
                "installed (\(unit)) but no systemd user manager answers; start it from your session with "
                    + "'systemctl --user enable --now \(SyncServiceUnit.unitName)', or run 'jqc sync --daemon'"
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
        let word = answer.output.trimming(.spacesAndNewlines)
        return .running(unit: unit, word: word.isEmpty ? "unknown" : String(word.prefix(40)))
    }
}
