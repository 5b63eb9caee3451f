import FoundationEssentials
import InspectionStore
import SyncWorker

/// What the restore-point check of a long-running sync depends on, as the
/// last check left it: the mark (`restore-point.json`), the C2SP witness
/// list (`witnesses.json`) and the config (the legacy witness, the
/// server), each file's stamp (inode, modification time in nanoseconds,
/// size: `LedgerWatch.stamp`) and bytes. `SyncService` asks the witnesses
/// again only when these changed.
///
/// A pass compares the stamps first, three `stat`s; a file is read only
/// when its stamp moved, and is a change only when its bytes differ, so a
/// file written again with the same bytes (a config saved unchanged) does
/// not bring a round trip to every witness.
struct RestorePointInputs: Equatable {
    var stamps: [String]
    var contents: [Data?]

    /// The files, in the order of `stamps` and `contents`.
    static func paths(_ home: LedgerDirectory) -> [String] {
        [home.restorePointPath, home.witnessesPath, home.configPath]
    }

    /// The files read now; `read` answers a file's bytes, nil when it is absent.
    static func current(
        _ home: LedgerDirectory, read: (String) -> Data? = { FileManager.default.contents(atPath: $0) }
    ) -> RestorePointInputs {
        let paths = Self.paths(home)
        return RestorePointInputs(stamps: paths.map(LedgerWatch.stamp), contents: paths.map(read))
    }

    /// Whether the files still hold what these inputs say. Only a file
    /// whose stamp moved is read (`read`); what was read is kept, with the
    /// new stamps, so the next pass compares stamps alone again.
    mutating func unchanged(
        in home: LedgerDirectory, read: (String) -> Data? = { FileManager.default.contents(atPath: $0) }
    ) -> Bool {
        let paths = Self.paths(home)
        let now = paths.map(LedgerWatch.stamp)
        guard now != stamps else { return true }
        let latest = paths.indices.map { index in now[index] == stamps[index] ? contents[index] : read(paths[index]) }
        defer { (stamps, contents) = (now, latest) }
        return latest == contents
    }
}
