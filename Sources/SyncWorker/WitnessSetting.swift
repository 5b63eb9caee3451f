import FoundationEssentials
import InspectionStore
import LedgerCore

/// Whether a sync asks a witness to keep the device's checkpoint, and
/// which: the C2SP witnesses of `witnesses.json` (`jqc witness add`), else
/// the legacy `witness_url` of the config (`jqc init --witness URL`, the
/// home-made protocol of earlier versions; no longer set by `jqc config`). With none, a
/// sync sends nothing outside the server's contract and says nothing about
/// witnessing; `jqc status` and `jqc audit` say once that the history is not
/// witnessed and how to configure a witness.
public enum WitnessSetting {
    /// What `status` and `audit` say when no witness is configured.
    public static let notConfigured =
        "witness: none configured, so no one outside this device keeps a checkpoint of its history; "
        + "add a C2SP witness with 'jqc witness add URL --key VKEY' (its submission prefix and cosigner key, "
        + "from its operator)"

    /// The witness step of a sync of a ledger with `config`, or nil when no
    /// witness is configured (`SyncRun.witness` then stays nil and the run
    /// skips the step).
    public static func witness(
        for config: LedgerConfig, key: @escaping () throws -> NoteKey
    ) -> CheckpointWitness? {
        guard let url = configured(config) else { return nil }
        return CheckpointWitness(key: key, device: config.deviceID, baseURL: url)
    }

    /// The witness step of a sync of the ledger in `directory`: the C2SP
    /// witnesses of `witnesses.json` when any is configured, else the legacy
    /// `witness_url`, else nil (no witness step).
    public static func witness(
        for config: LedgerConfig, directory: LedgerDirectory, key: @escaping () throws -> NoteKey
    ) throws -> CheckpointWitness? {
        let list = try WitnessList.load(directory)
        guard !list.witnesses.isEmpty else { return witness(for: config, key: key) }
        let witness = CheckpointWitness(key: key, device: config.deviceID, baseURL: configured(config))
        witness.cosigning = WitnessCosigning(list: list, directory: directory, device: config.deviceID, key: key)
        return witness
    }

    /// What `jqc status` names as the witness: the C2SP witnesses and the
    /// quorum, else the legacy `witness_url`, nil for none.
    public static func described(_ config: LedgerConfig, directory: LedgerDirectory) throws -> String? {
        let list = try WitnessList.load(directory)
        guard !list.witnesses.isEmpty else { return configured(config) }
        let names = try list.witnesses.map { try $0.cosignerKey().name }
        return "\(names.joined(separator: ", ")) (quorum \(list.effectiveQuorum) of \(names.count); 'jqc witness list')"
    }

    /// The configured witness's base URL, nil when there is none.
    public static func configured(_ config: LedgerConfig) -> String? {
        guard let url = config.witnessURL, !url.isEmpty else { return nil }
        return url
    }

    /// Whether two base URLs name the same place (trailing slashes aside).
    public static func sameURL(_ a: String, _ b: String) -> Bool {
        func trimmed(_ url: String) -> Substring {
            var text = Substring(url)
            while text.hasSuffix("/") { text.removeLast() }
            return text
        }
        return trimmed(a) == trimmed(b)
    }
}
