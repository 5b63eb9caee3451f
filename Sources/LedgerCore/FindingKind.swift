/// What kind of damage a check of the log found: one closed set for the
/// store's walk (`TamperFinding.kind`) and the audit (`ChainCheck.Finding`),
/// whose raw values are the `kind` of `jqc audit --json` and of the format
/// page. A new kind is one case here.
public enum FindingKind: String, Hashable, Sendable, CaseIterable {
    // Found by the walk of the whole chain.
    case changed
    case missing
    case reordered
    case unreadable
    case truncated
    case digestMismatch = "digest_mismatch"
    case indexMismatch = "index_mismatch"
    case brokenStreamLink = "broken_stream_link"
    case treeNodeMismatch = "tree_node_mismatch"
    case treeNodeMissing = "tree_node_missing"
    case treeNodeExtra = "tree_node_extra"
    case malformed
    case notDeterministic = "not_deterministic"
    case newerFormat = "newer_format"
    case formatSequence = "format_sequence"
    case checkpointMismatch = "checkpoint_mismatch"
    case carriedMissing = "carried_missing"
    case carriedDamaged = "carried_damaged"
    case headMapMismatch = "head_map_mismatch"
    // Found by the proofs of one inspection's records.
    case wrongRecord = "wrong_record"
    case notExtended = "not_extended"

    /// Whether the finding puts every record up to it in doubt rather than
    /// naming one record that failed.
    public var concernsTheWholeLog: Bool { self == .digestMismatch || self == .truncated }
}
