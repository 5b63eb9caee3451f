import Foundation
import InspectionStore
import LedgerTestSupport
import Testing

@testable import SyncWorker

/// What the background sync notices between runs (`LedgerWatch`): a commit
/// (`store-head` rewritten in place), a new login, a changed config, a
/// route or address coming or going; and nothing when nothing changed.
@Suite struct LedgerWatchTests {
    let temporary = TemporaryDirectory(prefix: "ledger-watch")
    var directory: LedgerDirectory { LedgerDirectory(path: temporary.path) }
    var route: String { temporary.appending("route") }

    func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    static let cases: [(file: String, change: LedgerWatch.Changes)] = [
        ("store-head", .ledger), ("credentials.json", .session), ("config.json", .config), ("route", .network),
    ]

    @Test(arguments: cases.indices)
    func eachChangeIsNoticedOnceAndNothingElse(index: Int) throws {
        let (file, change) = Self.cases[index]
        for name in ["store-head", "credentials.json", "config.json", "route"] {
            try write("first", temporary.appending(name))
        }
        var watch = LedgerWatch(directory, networkFiles: [route])
        #expect(watch.look().isEmpty)
        // A different length, so the change shows even within one tick of a coarse clock.
        try write("second, longer", temporary.appending(file))
        #expect(watch.look() == change)
        #expect(watch.look().isEmpty)
    }

    @Test func aFileThatAppearsOrGoesIsAChange() throws {
        var watch = LedgerWatch(directory, networkFiles: [route])
        try write("{}", directory.credentialsPath)
        #expect(watch.look() == .session)
        unlink(directory.credentialsPath)
        #expect(watch.look() == .session)
    }

    @Test func theKernelsRoutesAreRead() throws {
        // procfs reports a size of 0; its text must still be read.
        #expect(LedgerWatch.content("/proc/net/route").hasPrefix("Iface"))
        #expect(LedgerWatch.content(temporary.appending("none")) == "absent")
    }
}
