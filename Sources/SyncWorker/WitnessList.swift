import FoundationEssentials
import InspectionStore
import LedgerCore

/// The C2SP witnesses a ledger submits its checkpoint to (`witnesses.json`
/// in the ledger directory; `jqc witness add|remove`, `jqc config set
/// witness-quorum`): each by its submission prefix (jqc posts to
/// `<url>/add-checkpoint`) and its cosigner verifier key, and the number of
/// them whose verified cosignatures an audit asks for (all, by default).
public struct WitnessList: Codable, Sendable, Equatable {
    /// One configured witness.
    public struct Entry: Codable, Sendable, Equatable {
        /// The submission prefix, without a trailing slash.
        public var url: String
        /// Its cosigner verifier key, `name+keyid+base64(0x04 ‖ key)`.
        public var key: String

        /// The parsed key (checked when the entry was added).
        public func cosignerKey() throws(SignatureError) -> CosignerKey { try CosignerKey(parsing: key) }
    }

    public var version = 1
    /// How many witnesses must cosign; nil: all configured.
    public var quorum: Int?
    public var witnesses: [Entry] = []

    public init(quorum: Int? = nil, witnesses: [Entry] = []) {
        self.quorum = quorum
        self.witnesses = witnesses
    }

    /// The quorum in force: the one set, at most the number configured; all of them by default.
    public var effectiveQuorum: Int { min(quorum ?? witnesses.count, witnesses.count) }

    /// The list in `directory`'s `witnesses.json`; empty when there is none.
    public static func load(_ directory: LedgerDirectory) throws(WitnessListError) -> WitnessList {
        let path = directory.witnessesPath
        guard FileManager.default.fileExists(atPath: path) else { return WitnessList() }
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        let list: WitnessList
        do {
            list = try JSONDecoder().decode(WitnessList.self, from: data)
        } catch let error as DecodingError {
            throw .damaged(path: path, why: LedgerDirectory.reason(error))
        } catch {
            throw .damaged(path: path, why: "it cannot be decoded")
        }
        guard list.version == 1 else { throw .damaged(path: path, why: "its version \(list.version) is not 1") }
        for entry in list.witnesses {
            do { _ = try entry.cosignerKey() } catch {
                throw .damaged(path: path, why: "the key of \(entry.url) is not usable: \(error)")
            }
        }
        return list
    }

    /// Writes it durably (public data: 0644).
    public func save(_ directory: LedgerDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try FileStore.writeAtomically(try encoder.encode(self), to: directory.witnessesPath, mode: 0o644)
    }

    /// The URL as kept: trailing slashes removed, so `URL/` and `URL` are one witness.
    public static func normalized(_ url: String) -> String {
        var text = Substring(url.trimming(.spacesAndNewlines))
        while text.hasSuffix("/") { text.removeLast() }
        return String(text)
    }

    /// Adds (or, for a URL already configured, replaces) a witness; the key
    /// must be a cosigner key whose key id matches, and no other URL may
    /// hold a key of the same name (one witness, one entry).
    public mutating func add(url: String, key: String) throws(WitnessListError) -> CosignerKey {
        let url = Self.normalized(url)
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.count > "https://".count else {
            throw .badURL(url)
        }
        let parsed: CosignerKey
        do { parsed = try CosignerKey(parsing: key) } catch { throw .badKey(key: key, why: error.description) }
        // A key that does not parse (`load` and `add` refuse one) names no cosigner: it shares no name.
        if let other = witnesses.first(where: { $0.url != url && (try? $0.cosignerKey())?.name == parsed.name }) {
            throw .duplicateName(name: parsed.name, url: other.url)
        }
        let entry = Entry(url: url, key: parsed.verifierKey)
        if let index = witnesses.firstIndex(where: { $0.url == url }) {
            witnesses[index] = entry
        } else {
            witnesses.append(entry)
        }
        return parsed
    }

    /// Removes the witness at `url`; throws when none is configured there.
    public mutating func remove(url: String) throws(WitnessListError) -> Entry {
        let url = Self.normalized(url)
        guard let index = witnesses.firstIndex(where: { $0.url == url }) else {
            throw .notConfigured(url: url, configured: witnesses.map(\.url))
        }
        return witnesses.remove(at: index)
    }
}

/// Why the witness list could not be read or changed.
public enum WitnessListError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(String)
    case damaged(path: String, why: String)
    case badURL(String)
    case badKey(key: String, why: String)
    case duplicateName(name: String, url: String)
    case notConfigured(url: String, configured: [String])
    case badQuorum(value: String, witnesses: Int)

    public var description: String {
        switch self {
        case .unreadable(let path): "\(path) cannot be read (permission denied?); fix its permissions"
        case .damaged(let path, let why):
            "\(path) is damaged: \(why). Remove it and add the witnesses again with 'jqc witness add URL --key VKEY'."
        case .badURL(let url):
            "\(url.debugDescription) is not a witness URL: give the witness's submission prefix, http:// or "
                + "https:// (jqc posts to <URL>/add-checkpoint); nothing was changed"
        case .badKey(let key, let why):
            "the key \(key.debugDescription) is not a witness's cosigner key: \(why). Ask the witness's operator "
                + "for its verifier key (name+keyid+base64 of 0x04 and its Ed25519 key); nothing was changed"
        case .duplicateName(let name, let url):
            "a witness named \(name) is already configured at \(url): remove it first ('jqc witness remove "
                + "\(url)'); nothing was changed"
        case .notConfigured(let url, let configured):
            "no witness is configured at \(url)"
                + (configured.isEmpty ? " (none is)" : " (configured: \(configured.joined(separator: ", ")))")
                + "; see 'jqc witness list'"
        case .badQuorum(let value, let witnesses):
            "witness-quorum must be a whole number from 1 to the number of witnesses (\(witnesses) configured), "
                + "not \(value.debugDescription); nothing was changed"
        }
    }
}
