import FoundationEssentials
import InspectionDomain
// A salvage appends the verified prefix of a damaged log as it was: those
// records were decided when they were first recorded, and deciding them again
// could change what the salvage keeps.
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerStore

/// From a damaged store, every record whose chain still verifies, up to the
/// first break, copied into a new ledger.
///
/// The damaged store is read only, and only through `read`, which the
/// caller runs where a failure cannot take it down (the CLI runs a child
/// process, `jqc salvage-read`): LMDB can meet a page it can only assert on,
/// which ends that process, and the entries printed before are kept. When
/// the pre-flight check refuses the file, the store is read through repaired
/// scratch copies instead (one per sane meta page, padded if truncated) and
/// the longest verified prefix wins. The records go into the new ledger
/// through `InspectionLedger.append`, the normal door, so the chain (the
/// same hashes), the indexes, the Merkle tree and the views are built as for
/// any append.
public struct LedgerSalvage: Sendable {
    public let source: LedgerDirectory
    public let target: LedgerDirectory

    public init(from source: LedgerDirectory, into target: LedgerDirectory) {
        self.source = source
        self.target = target
    }

    /// What a salvage kept, and what it lost.
    public struct Outcome: Sendable {
        public var reading: SalvageReading
        public var summary: LedgerCopy.Summary
        /// The store was read through repaired copies of its meta pages.
        public var metaPagesRepaired: Bool
    }

    /// Checks that there is something to salvage, claims the destination
    /// (made fresh: `CopyDestination`), reads the store with `read` (each
    /// store directory's raw output checked by `SalvageReading`) and writes
    /// the new ledger. A failure removes what it made.
    public func run(read: (String) throws -> SalvageReading) throws -> Outcome {
        let storeFile = source.storeDataPath
        guard source.exists || FileManager.default.fileExists(atPath: storeFile) else {
            throw LedgerDirectoryError.noLedger(source.path)
        }
        guard FileManager.default.fileExists(atPath: storeFile) else { throw SalvageError.noStore(source.storePath) }
        let destination = try CopyDestination.claim(target.path, ledger: source.path, for: "salvage")
        let scratch = target.salvageScratchPath
        // Scratch copies only: one left behind is claimed again by the next salvage.
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        do {
            let sources = try EventLog.salvageSources(of: source.storePath, scratch: scratch)
            let readings = try sources.map(read)
            guard let best = readings.max(by: { $0.events.count < $1.events.count }) else {
                throw SalvageError.noUsableMetaPage(source.storePath)
            }
            guard !best.events.isEmpty else {
                throw SalvageError.nothingVerified(source.storePath, best.firstBreak ?? "the events table is empty")
            }
            // Removed before the new ledger is written (and again on the way out, by the `defer`).
            try? FileManager.default.removeItem(atPath: scratch)
            let summary = try write(best)
            return Outcome(reading: best, summary: summary, metaPagesRepaired: sources != [source.storePath])
        } catch {
            destination.remove()
            throw LedgerCopy.spaceNamed(error, at: target.path)
        }
    }

    /// Creates the new ledger and appends the salvaged events to it, in
    /// batches, through the views.
    private func write(_ reading: SalvageReading) throws -> LedgerCopy.Summary {
        try FileStore.makeDirectory(target.photosPath)
        let ledger = try InspectionLedger(storePath: target.storePath, photosPath: target.photosPath, access: .creating)
        defer { ledger.close() }
        var start = 0
        while start < reading.events.count {
            let end = min(start + 1000, reading.events.count)
            // The `carried` table with the first batch: every reception
            // after it resolves what it carries from there.
            try ledger.append(Array(reading.events[start..<end]), carrying: start == 0 ? reading.carried : .init())
            start = end
        }
        let head = try ledger.log.head()
        if let last = reading.lastHash, head.head != last {
            throw SalvageError.headDiffers(head.description)
        }
        let photos = try LedgerCopy.copyPhotos(from: source, to: target)
        if FileManager.default.fileExists(atPath: source.configPath) {
            try LedgerCopy.copyConfig(from: source, to: target)
        } else {
            let config = LedgerConfig(deviceID: UUID(), serverURL: nil, createdAt: SystemClock().now())
            try config.save(target)
        }
        return LedgerCopy.Summary(events: head.position, head: head, photos: photos)
    }
}

/// Why nothing could be salvaged.
public enum SalvageError: Error, CustomStringConvertible, Equatable {
    /// The store directory has no `data.mdb`.
    case noStore(String)
    /// Neither meta page of `data.mdb` can be used.
    case noUsableMetaPage(String)
    /// Not even the first record verified.
    case nothingVerified(String, String)
    /// The new ledger's chain ended elsewhere than the salvaged records' own.
    case headDiffers(String)

    public var description: String {
        switch self {
        case .noStore(let store):
            "\(store)/data.mdb does not exist, so there is nothing to salvage. Restore a backup."
        case .noUsableMetaPage(let store):
            "neither meta page of \(store)/data.mdb can be used, so no record can be found; nothing was written. "
                + "Restore a backup."
        case .nothingVerified(let store, let why):
            "no record of \(store) could be salvaged (\(why)); nothing was written. Restore a backup."
        case .headDiffers(let head):
            "the new ledger's chain head (\(head)) differs from the salvaged records' own; nothing was kept."
        }
    }
}
