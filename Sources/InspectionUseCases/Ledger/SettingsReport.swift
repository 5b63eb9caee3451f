import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import SyncWorker

/// What `jqc config` says of the ledger's settings, as text and JSON: every
/// setting's value in force and where it comes from, a setting that has
/// none, and after `set` or `unset` the change and what it means now (a
/// saved session for another server, a witness asked at each sync or no
/// longer, an actor that `JQC_ACTOR` or a login records over).
public enum SettingsReport {
    /// A setting's value in force and where it comes from.
    public struct Row: Sendable, Equatable {
        public let setting: LedgerSetting
        public let value: String?
        public let source: SettingSource

        public init(setting: LedgerSetting, value: String?, source: SettingSource) {
            self.setting = setting
            self.value = value
            self.source = source
        }

        /// The row of `config list`: the key padded, the value on one line, `(none)`, or where it comes from.
        public var line: String {
            let shown = value.map(TerminalText.singleLine) ?? "(none)"
            let from = source == .environment ? " (from JQC_ACTOR)" : ""
            return String((setting.rawValue + String(repeating: " ", count: 8)).prefix(8)) + shown + from
        }

        /// `config get --json`, and an entry of `config list --json`.
        public var jsonValue: JSONValue {
            .object([
                "key": .string(setting.rawValue), "value": .optional(value), "source": .string(source.rawValue),
            ])
        }

        /// The value alone, as `config get` prints it; refused when the setting has none.
        public func requireValue() throws(SettingNotSet) -> String {
            guard let value else { throw SettingNotSet(setting: setting) }
            return TerminalText.singleLine(value)
        }
    }

    /// Every setting, in the order `LedgerSetting` lists them.
    public static func rows(_ settings: LedgerSettings) throws -> [Row] {
        try LedgerSetting.allCases.map { setting in
            let (value, source) = try settings.inForce(setting)
            return Row(setting: setting, value: value, source: source)
        }
    }

    /// `config list --json`.
    public static func listJSON(_ rows: [Row]) -> JSONValue { .object(["settings": .array(rows.map(\.jsonValue))]) }

    /// `config set --json` and `config unset --json` (`now` nil once unset).
    public static func changeJSON(_ setting: LedgerSetting, now: String?, previous: String?) -> JSONValue {
        .object(["key": .string(setting.rawValue), "value": .optional(now), "previous": .optional(previous)])
    }

    /// What `config set` says, a line at a time to `say`: the change, then
    /// what it means now. The session and the actor's source are asked only
    /// for the settings they bear on, after the lines before them are said
    /// (a session that cannot be read fails the command there).
    public static func sayChange(
        of setting: LedgerSetting, now: String, previous: String?, session: () throws -> StoredSession?,
        actorSource: () throws -> SettingSource, say: (String) -> Void
    ) throws {
        let was = previous.map { " (was \(TerminalText.singleLine($0)))" } ?? ""
        say("\(setting.rawValue) set to \(TerminalText.singleLine(now))\(was).")
        switch setting {
        case .server:
            if let saved = try session(), !LedgerSettings.sameServer(saved.serverURL, now) {
                say("The saved session is for \(saved.serverURL); log in to this server with 'jqc login'.")
            }
        case .witness:
            say("Each sync now sends this device's checkpoint to the witness.")
        case .actor:
            if try actorSource() == .environment { say("JQC_ACTOR is set and wins over it while it is.") }
            if let saved = try session() {
                say(
                    "\(TerminalText.singleLine(saved.user.displayName)) is logged in and is recorded instead "
                        + "until 'jqc logout'.")
            }
        }
    }

    /// What `config unset` says: nothing changed, or the change and what it means now.
    public static func unsetLines(_ setting: LedgerSetting, previous: String?) -> [String] {
        guard let previous else { return ["\(setting.rawValue) was not set; nothing was changed."] }
        var lines = ["\(setting.rawValue) unset (was \(TerminalText.singleLine(previous)))."]
        if setting == .witness {
            lines.append("Syncs no longer send checkpoints to a witness; the history is not witnessed.")
        }
        return lines
    }
}

/// `config get KEY` of a setting with no value (exit status 1), saying how to set it.
public struct SettingNotSet: Error, CustomStringConvertible, Sendable, Equatable {
    public let setting: LedgerSetting

    public var description: String {
        // A witness is added with its key now ('config set witness' is refused).
        guard setting != .witness else {
            return "witness is not set (\(setting.meaning)). Add a C2SP witness with 'jqc witness add URL --key VKEY'."
        }
        return "\(setting.rawValue) is not set (\(setting.meaning)). Set it with 'jqc config set \(setting.rawValue) "
            + "\(setting == .actor ? "NAME" : "URL")'."
    }
}

extension LedgerSettings {
    /// Whether two server URLs name the same server: equal but for trailing slashes.
    public static func sameServer(_ a: String, _ b: String) -> Bool {
        func trimmed(_ url: String) -> String {
            var text = url
            while text.hasSuffix("/") { text.removeLast() }
            return text
        }
        return trimmed(a) == trimmed(b)
    }
}
