import LMDB

extension LedgerError {
    /// Makes a damaged or hostile store end the process with a message on
    /// stderr and exit status 1, never a signal or an abort (LMDB's
    /// assertions and faults on the map: `StoreFaults`). Each message starts
    /// with `prefix` (the program's name) and says what to do.
    public static func installFaultGuards(prefix: String) {
        StoreFaults.install(
            wording: StoreFaults.Wording(
                damaged: { store, what in
                    prefix + LedgerError.damagedStore(path: store, what: what).description
                },
                noSpace: { store, free in
                    prefix + "no space left on the device holding \(store) (\(free) KiB free); the command did not "
                        + "finish and its transaction was not committed. Free some space and run it again."
                },
                damagedTable: { store, table, emptying in
                    guard LedgerError.isViewTable(table) else { return nil }
                    return prefix + LedgerError.damagedView(path: store, table: table, emptying: emptying).description
                }))
    }
}
