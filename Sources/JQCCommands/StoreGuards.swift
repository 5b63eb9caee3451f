import Foundation
import LMDB
import LedgerStore

extension JQC {
    /// Makes a damaged or hostile store end `jqc` with a message and exit
    /// status 1, never a signal or an abort (see `StoreFaults`). The `jqc`
    /// executable calls it first thing; tests that run `JQC.main` in-process
    /// leave their own process's signals alone.
    public static func installStoreGuards() {
        StoreFaults.install(
            wording: StoreFaults.Wording(
                damaged: { store, what in
                    "jqc: " + LedgerError.damagedStore(path: store, what: what).description
                },
                noSpace: { store, free in
                    "jqc: no space left on the device holding \(store) (\(free) KiB free); the command did not "
                        + "finish and its transaction was not committed. Free some space and run it again."
                }))
    }
}
