import ArgumentParsing
import FoundationEssentials
import LedgerCore

/// `jqc.1`, the manual page `Tools/install` and `Tools/package` install:
/// the command specs (as `jqc help` shows them) plus what only a manual has.
enum ManualPage {
    /// The page, dated by `SOURCE_DATE_EPOCH` when set (reproducible
    /// packages), else today.
    static func text(environment: [String: String]) -> String {
        let seconds = environment["SOURCE_DATE_EPOCH"].flatMap(TimeInterval.init) ?? Date().timeIntervalSince1970
        // Days from 1970 to 9999 (a date the page can print).
        let clamped = Int64(min(max(seconds, 0), 253_402_300_799))
        let date = String(Timestamp(microsecondsSinceEpoch: clamped * 1_000_000).iso8601.prefix(10))
        return JQC.program.manPage(date: date, sections: sections)
    }

    static let sections: [(title: String, text: String)] = [
        (
            "Exit status",
            "0 success; 1 refused or failed (the message on standard error says what, why and what to do); "
                + "2 usage error (the message and the usage line on standard error)."
        ),
        (
            "Environment",
            """
            JQC_HOME: the ledger directory, unless --ledger is given.

            XDG_DATA_HOME: the ledger is $XDG_DATA_HOME/jqc when neither --ledger nor JQC_HOME is set \
            (default ~/.local/share/jqc).

            VISUAL, EDITOR: the editor of 'jqc edit' (default vi).

            NO_COLOR: no colour in the output.

            JQC_MAX_RESPONSE_BYTES: the largest JSON answer accepted from the server, in bytes (default \
            8388608, 8 MiB); a longer one is refused while it arrives.

            SIGINT, SIGTERM: a command talking to the server stops its requests within about a second, \
            records nothing half-done and exits with status 1.
            """
        ),
        (
            "Files",
            "LEDGER/store: the event log and its views (LMDB); LEDGER/photos: captured photos, named by "
                + "SHA-256; LEDGER/config.json: the device id and server; LEDGER/credentials.json: the saved session."
        ),
        ("See also", "jqc help COMMAND; jqc completion bash|zsh|fish."),
    ]
}
