import FoundationEssentials
import InspectionStore
import LedgerStore

// MARK: - Opening for commands that only read

extension Invocation {
    /// The whole ledger opened read-only, for commands that only read
    /// (listings, `show`, `stats`): they work on a read-only copy, never
    /// take the writer lock, and never create a table.
    ///
    /// Views built by another version of jqc are stale; those are rebuilt
    /// by opening the ledger for writing, which a read-only copy refuses,
    /// so then the error says what works instead.
    func readingLedger() throws -> InspectionLedger {
        if let openedForReading { return openedForReading }
        try home.checkReadable()
        try home.requireLedger()
        let opened: InspectionLedger
        do {
            opened = try openingStore {
                do {
                    return try InspectionLedger.openForReading(storePath: home.storePath, photosPath: home.photosPath)
                        .ledger
                } catch LedgerError.noLedger where FileManager.default.fileExists(atPath: home.storeDataPath) {
                    throw NoViewsYet()
                }
            }
        } catch is NoViewsYet {
            // The log exists but its views were never made.
            return try writableLedger(because: .noViews)
        }
        guard try opened.views.staleProjections().isEmpty else {
            opened.close()
            return try writableLedger(because: .staleViews)
        }
        openedForReading = opened
        return opened
    }

    /// Runs `body` against the read-only ledger; when it meets a damaged view
    /// row (which a read-only ledger can only report), opens the ledger for
    /// writing, which rebuilds that view from the log and says so
    /// (`InspectionLedger.heal`), and runs it once more: the one retry of
    /// the damage. A read-only copy keeps the damage as the error.
    func reading<T>(_ body: (InspectionLedger) throws -> T) throws -> T {
        let ledger = try readingLedger()
        do {
            return try body(ledger)
        } catch let damage as ViewDamage {
            guard ledger === openedForReading else { throw damage }
            let writable: InspectionLedger
            do {
                openedForReading = nil
                ledger.close()
                writable = try self.ledger()
            } catch let error where ReadOnlyOpening.isLockRefusal(error) {
                throw damage
            }
            try writable.heal(damage)
            return try body(writable)
        }
    }

    /// The ledger opened for writing so that its views can be built, or the
    /// reason they cannot be when the ledger is read-only.
    private func writableLedger(because reason: ReadingError.Reason) throws -> InspectionLedger {
        do {
            return try ledger()
        } catch let error where ReadOnlyOpening.isLockRefusal(error) {
            throw ReadingError.viewsNeedWriting(home.path, reason)
        }
    }
}

/// A log whose view tables were never made: the ledger is opened for writing to make them.
private struct NoViewsYet: Error {}

/// Why a read command cannot answer from a ledger it may only read.
enum ReadingError: Error, CustomStringConvertible {
    enum Reason { case staleViews, noViews }

    case viewsNeedWriting(String, Reason)

    var description: String {
        switch self {
        case .viewsNeedWriting(let path, let reason):
            (reason == .staleViews
                ? "the views of the ledger at \(path) were built by another version of jqc"
                : "the ledger at \(path) has no views yet")
                + ", and it is read-only, so they cannot be built. 'jqc log' and 'jqc audit' read the log alone "
                + "and work on it as it is; for listings, copy the ledger somewhere writable first."
        }
    }
}
