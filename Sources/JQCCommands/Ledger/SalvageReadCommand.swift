import ArgumentParsing
import FoundationEssentials
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import Synchronization

/// `jqc salvage-read STORE` (hidden): prints every entry of a store's
/// `events` table, one line each (`POSITION HEX`), then each of its `carried`
/// table (`carried LEAF HEX`), for `salvage`, which runs
/// it as a child so that whatever LMDB does on a damaged page ends the child
/// only. The store is opened read-only and without a lock file: nothing in
/// it is written.
struct SalvageReadCommand: CommandWithOneArgument {
    static let path = ["salvage-read"]
    static let argument = PositionalSpec("STORE", help: "The store directory.")
    static let spec = CommandSpec(
        "salvage-read", abstract: "Print a store's raw events, for 'jqc salvage' (internal).",
        positionals: [argument], hidden: true)

    var store: String

    init(argument: String) { store = argument }

    func run(_ invocation: Invocation) throws {
        // Written straight to the file descriptor, line by line: if LMDB ends
        // this process, every line before it has reached the parent.
        let out = OpenFile.standardOutput
        // A parent gone (a closed pipe) leaves nothing to tell: the lines are dropped.
        func write(_ text: String) { try? out.write(text) }
        do {
            let found = try EventLog.rawEntries(ofStoreAt: store) { count in
                write("# \(count)\n")
            } entry: { position, value in
                write(Self.line("\(position ?? 0) ", value))
            } carried: { key, value in
                write(Self.line(SalvageReading.carriedPrefix + Self.hex(key) + " ", value))
            }
            if !found { write("! the store has no events table\n") }
        } catch {
            write("! \(TerminalText.singleLine("\(error)"))\n")
        }
    }

    static let digits: [Character] = Array("0123456789abcdef")

    static func hex(_ bytes: [UInt8]) -> String {
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// `prefix` then `value` in hex, one line.
    static func line(_ prefix: String, _ value: [UInt8]) -> String { prefix + hex(value) + "\n" }
}
