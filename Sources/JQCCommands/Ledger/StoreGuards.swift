import FoundationEssentials
import Glibc
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

extension JQC {
    /// Makes a write to a reader that went away (`jqc log | head`) fail
    /// with EPIPE instead of ending `jqc` by SIGPIPE: the command finishes
    /// what it was doing (a sync records its outcomes) and stops printing
    /// (`TextOutput.readerIsGone`). The `jqc` executable calls it first
    /// thing; libcurl's sockets get EPIPE too, which it expects.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }
}
