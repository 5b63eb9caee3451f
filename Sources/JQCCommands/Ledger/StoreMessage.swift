import FoundationEssentials
import LedgerCore

/// Wording shared by the messages of the ledger's files.
enum StoreMessage {
    /// Cuts every run of more than `limit` characters without a space (a
    /// pasted value, an id list) to its start and a count, so a message
    /// never echoes a huge value back whole.
    static func cuttingLongRuns(_ text: String, limit: Int = 120) -> String {
        guard text.count > limit else { return text }
        var result = ""
        var run = ""
        func flush() {
            if run.count > limit {
                result += run.prefix(limit / 2) + "…(\(run.count) characters)"
            } else {
                result += run
            }
            run = ""
        }
        for character in text {
            if character == " " || character == "\n" {
                flush()
                result.append(character)
            } else {
                run.append(character)
            }
        }
        flush()
        return result
    }
}
