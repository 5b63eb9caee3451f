import LedgerStore

extension JQC {
    /// Makes a damaged or hostile store end `jqc` with a message and exit
    /// status 1, never a signal or an abort (`LedgerError.installFaultGuards`).
    /// The `jqc` executable calls it first thing; tests that run `JQC.main`
    /// in-process leave their own process's signals alone.
    public static func installStoreGuards() {
        LedgerError.installFaultGuards(prefix: "jqc: ")
    }
}
