import FoundationEssentials
import InspectionStore
import LedgerCore

/// A setting `jqc config` reads and writes in the ledger's `config.json`.
public enum LedgerSetting: String, CaseIterable, Sendable {
    /// The sync server's API base URL (`server_url`).
    case server
    /// The witness of the log's history (`witness_url`); none by default.
    case witness
    /// The offline actor's name (`actor`); `JQC_ACTOR` wins over it, a login over both.
    case actor

    /// What the setting is, for `jqc help config` and refusals.
    public var meaning: String {
        switch self {
        case .server: "the sync server's API base URL, e.g. https://jqc.example/api/v1"
        case .witness: "the legacy witness URL of earlier versions; C2SP witnesses are in 'jqc witness list'"
        case .actor: "the name recorded when nobody is logged in and no --as NAME is given"
        }
    }
}

/// Where a setting's value in force comes from.
public enum SettingSource: String, Sendable {
    /// `config.json`.
    case config
    /// An environment variable (`JQC_ACTOR`).
    case environment
    /// Neither: the setting has no value.
    case none
}

/// Why a setting cannot take a value.
public enum LedgerSettingError: Error, Equatable, CustomStringConvertible {
    case unknownSetting(String)
    case notAURL(LedgerSetting, String)
    /// An http(s) URL jqc cannot use as a base URL, and why.
    case malformedURL(LedgerSetting, String, String)
    case invisibleName(String)
    /// `config set witness URL`: a witness is configured by its key now (C2SP tlog-witness).
    case witnessNeedsKey(String)

    public var description: String {
        switch self {
        case .witnessNeedsKey(let value):
            "a witness is configured with its cosigner key now: run 'jqc witness add \(value) --key VKEY' (VKEY "
                + "from the witness's operator; jqc posts to \(value)/add-checkpoint, C2SP tlog-witness); nothing "
                + "was changed"
        case .unknownSetting(let name):
            "there is no setting '\(name)'; nothing was changed. The settings are "
                + LedgerSetting.allCases.map(\.rawValue).joined(separator: ", ") + " ('jqc config list' shows them)."
        case .notAURL(let setting, let value):
            "\(setting.rawValue) '\(value)' is not an http:// or https:// URL; nothing was changed. Give "
                + setting.meaning + "."
        case .malformedURL(let setting, let value, let why):
            "\(setting.rawValue) '\(value)' is not a usable URL: \(why); nothing was changed. Give "
                + setting.meaning + "."
        case .invisibleName(let value):
            "actor '\(value)' has no visible character; nothing was changed. Give the inspector's name, e.g. "
                + "jqc config set actor \"Dana\"."
        }
    }
}

/// Reads and changes the settings of one ledger (`config.json`), the
/// environment's `JQC_ACTOR` taken into account for the actor.
public struct LedgerSettings {
    public let directory: LedgerDirectory
    public let environment: [String: String]

    public init(directory: LedgerDirectory, environment: [String: String]) {
        self.directory = directory
        self.environment = environment
    }

    /// The setting named `name`, or a refusal listing the settings.
    public static func setting(named name: String) throws(LedgerSettingError) -> LedgerSetting {
        guard let setting = LedgerSetting(rawValue: name) else { throw .unknownSetting(name) }
        return setting
    }

    /// The value stored in `config.json`, nil when unset.
    public func stored(_ setting: LedgerSetting) throws -> String? {
        Self.value(of: setting, in: try LedgerConfig.load(directory))
    }

    /// The value in force and where it comes from: for the actor, a valid
    /// `JQC_ACTOR` comes before `config.json`.
    public func inForce(_ setting: LedgerSetting) throws -> (value: String?, source: SettingSource) {
        if setting == .actor, let named = try Self.environmentActor(environment) {
            return (named, .environment)
        }
        let value = try stored(setting)
        return (value, value == nil ? .none : .config)
    }

    /// Stores `value` (checked first) and answers the value it replaced.
    @discardableResult
    public func set(_ setting: LedgerSetting, to value: String) throws -> String? {
        let checked = try Self.checked(value, for: setting)
        var config = try LedgerConfig.load(directory)
        let previous = Self.value(of: setting, in: config)
        Self.assign(checked, to: setting, in: &config)
        try config.save(directory)
        return previous
    }

    /// Removes the setting and answers the value it had.
    @discardableResult
    public func unset(_ setting: LedgerSetting) throws -> String? {
        var config = try LedgerConfig.load(directory)
        let previous = Self.value(of: setting, in: config)
        Self.assign(nil, to: setting, in: &config)
        if previous != nil { try config.save(directory) }
        return previous
    }

    /// `value` as it is stored: a URL must be http(s), a name keeps at
    /// least one visible character and loses surrounding white space.
    public static func checked(_ value: String, for setting: LedgerSetting) throws(LedgerSettingError) -> String {
        switch setting {
        case .server, .witness:
            let url = value.trimming(.spaces)
            let host =
                url.hasPrefix("https://") ? url.dropFirst(8) : url.hasPrefix("http://") ? url.dropFirst(7) : nil
            guard let host, !host.isEmpty, !host.hasPrefix("/"), !url.contains(where: { $0.isWhitespace })
            else { throw .notAURL(setting, value) }
            if let why = urlProblem(url) { throw .malformedURL(setting, value, why) }
            return url
        case .actor:
            let name = value.trimming(.spacesAndNewlines)
            guard name.unicodeScalars.contains(where: isVisible) else { throw .invisibleName(value) }
            return name
        }
    }

    /// Why `url` is not a base URL jqc can use (`http://` or `https://`, a
    /// host name, IPv4 or bracketed IPv6 address, an optional port from 1 to
    /// 65535, an optional path; no user name or password, query, fragment,
    /// white space or control character), nil when it is one.
    public static func urlProblem(_ url: String) -> String? {
        let scheme = url.hasPrefix("https://") ? "https://" : url.hasPrefix("http://") ? "http://" : nil
        guard let scheme else { return "it does not start with http:// or https://" }
        if url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "it holds white space or a control character"
        }
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let path = rest.dropFirst(authority.count)
        if path.contains("?") || path.contains("#") || rest.hasPrefix("?") || rest.hasPrefix("#") {
            return "a base URL has no query (?) or fragment (#)"
        }
        if authority.contains("@") { return "it names a user (@): log in with 'jqc login', never in the URL" }
        var host = authority
        var port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return "the IPv6 address has no closing ]" }
            host = authority[authority.startIndex...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return "something other than :PORT follows the IPv6 address" }
                port = after.dropFirst()
            }
            let inside = host.dropFirst().dropLast()
            if inside.isEmpty || !inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) {
                return "the IPv6 address between [ and ] is not one"
            }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                port = authority[authority.index(after: colon)...]
            }
            if host.isEmpty { return "it names no host" }
            let allowed = host.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "." || $0 == "_"
            }
            if !allowed { return "the host '\(host)' has a character a host name cannot have" }
            if host.hasPrefix(".") || host.hasPrefix("-") || host.contains("..") {
                return "the host '\(host)' is not a host name"
            }
        }
        if let port {
            if port.isEmpty { return "the port after ':' is empty" }
            guard port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), let number = Int(port),
                (1...65535).contains(number)
            else { return "the port '\(port)' is not a number from 1 to 65535" }
        }
        return nil
    }

    /// `JQC_ACTOR`, trimmed; nil when unset or empty; refused when it has
    /// nothing visible (it would record events by nobody an auditor could read).
    public static func environmentActor(_ environment: [String: String]) throws(LedgerSettingError) -> String? {
        guard let given = environment["JQC_ACTOR"], !given.isEmpty else { return nil }
        return try checked(given, for: .actor)
    }

    /// Whether `scalar` puts ink on the screen: not white space, not a
    /// control, format (zero-width, bidi) or unassigned code point.
    public static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .unassigned, .surrogate, .privateUse, .spaceSeparator, .lineSeparator,
            .paragraphSeparator:
            return false
        default:
            return true
        }
    }

    static func value(of setting: LedgerSetting, in config: LedgerConfig) -> String? {
        let value: String? =
            switch setting {
            case .server: config.serverURL
            case .witness: config.witnessURL
            case .actor: config.actor
            }
        return value?.isEmpty == true ? nil : value
    }

    static func assign(_ value: String?, to setting: LedgerSetting, in config: inout LedgerConfig) {
        switch setting {
        case .server: config.serverURL = value
        case .witness: config.witnessURL = value
        case .actor: config.actor = value
        }
    }
}
