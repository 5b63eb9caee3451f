import LMDB

/// The names of the files and directories of a ledger directory
/// (`Schemas/ledger-format.md` § The ledger directory), each spelled once.
///
/// `LedgerDirectory` (InspectionStore) is the layout a command uses: one
/// path property per entry below. The names sit here, a layer lower,
/// because the store itself must find its ledger from a store path
/// (`StoreHead.path(forStore:)`) and the photo store its staging directory,
/// and neither can see `LedgerDirectory`.
public enum LedgerLayout {
    /// The LMDB environment's directory (0700).
    public static let store = "store"
    /// The LMDB data file, inside `store`.
    public static let storeData = Environment.dataFileName
    /// The LMDB lock file, inside `store`.
    public static let storeLock = Environment.lockFileName
    /// The lock a view rebuild holds exclusively (an `flock`), inside `store`.
    public static let rebuildLock = "rebuild.lock"
    /// The photo and signature files, named by their SHA-256.
    public static let photos = "photos"
    /// Inside `photos`: a capture's or a reception's files before their rename.
    public static let photoStaging = ".incoming"
    /// The device id and settings (`LedgerConfig`); written last by `jqc init`.
    public static let config = "config.json"
    /// The device's Ed25519 signing key (0600).
    public static let deviceKey = "device.key"
    /// A rotation's new key, between its writing and its event.
    public static let pendingDeviceKey = "device.key.next"
    /// The login's session tokens (0600).
    public static let credentials = "credentials.json"
    /// The lock a token refresh holds (an `flock`), beside `credentials`.
    public static let credentialsLock = "credentials.json.lock"
    /// Present only after the server refused the saved session.
    public static let sessionRefused = "session-refused.json"
    /// The newest head this device committed (`StoreHead`).
    public static let storeHead = "store-head"
    /// The last checkpoint this device signed (a signed note, 0600).
    public static let lastCheckpoint = "last-checkpoint"
    /// Held by a running `jqc sync` (an `flock`).
    public static let syncLock = "sync.lock"
    /// The items a sync pass sent and has not had answered (the in-flight journal).
    public static let syncInflight = "sync-inflight"
    /// The running background sync's status.
    public static let syncDaemonStatus = "sync-daemon.json"
    /// The configured witnesses and the quorum.
    public static let witnesses = "witnesses.json"
    /// The latest checkpoint witnesses cosigned.
    public static let cosignedCheckpoint = "cosigned-checkpoint"
    /// Present only in a backup until a check passed (`RestorePoint`).
    public static let restorePoint = "restore-point.json"
    /// `jqc salvage`'s scratch directory in the new ledger, removed when it ends.
    public static let salvageScratch = ".salvage-scratch"
}
