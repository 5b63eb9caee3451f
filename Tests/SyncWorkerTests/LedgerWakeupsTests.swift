import Foundation
import InspectionStore
import LedgerStore
import LedgerTestSupport
import Synchronization
import Testing

@testable import SyncWorker

/// What wakes the background sync without polling (issue #33 item 5):
/// inotify on the ledger directory, for each way a ledger file changes (a
/// commit rewriting `store-head` in place, a session or config renamed
/// into place, a file removed), and `JQC_SYNC_WATCH=poll` turning it off.
@Suite struct LedgerWakeupsTests {
    let temporary = TemporaryDirectory(prefix: "ledger-wakeups")
    var directory: LedgerDirectory { LedgerDirectory(path: temporary.path) }

    /// Counts the wakes it is given.
    final class Wakes: Sendable {
        let count = Mutex(0)
        func wake() { count.withLock { $0 += 1 } }
        var seen: Int { count.withLock { $0 } }
    }

    /// How a test changes the directory: in place, renamed into place, removed.
    static let changes: [(name: String, change: @Sendable (LedgerDirectory) throws -> Void)] = [
        (
            "store-head rewritten in place",
            { try "2".write(toFile: $0.path + "/store-head", atomically: false, encoding: .utf8) }
        ),
        (
            "config.json renamed into place",
            { try "{}".write(toFile: $0.configPath, atomically: true, encoding: .utf8) }
        ),
        ("credentials.json removed", { _ = unlink($0.credentialsPath) }),
    ]

    @Test(arguments: changes.indices)
    func eachChangeOfALedgerFileWakesTheDaemon(index: Int) throws {
        // Made without opening them: a file this thread writes and closes
        // can still be open in a child another test's thread is spawning
        // (posix_spawn copies the descriptors until the child's exec), and
        // its close, the kernel's IN_CLOSE_WRITE, then comes after the watch
        // (seen in a full run: "wakes.seen → 1"; a C loop spawning beside
        // open-write-close saw 35 events in 2,000 rounds, mknod none).
        for path in [directory.path + "/store-head", directory.credentialsPath] {
            #expect(mknod(path, S_IFREG | 0o600, 0) == 0, "mknod \(path): errno \(errno)")
        }
        let wakes = Wakes()
        let wakeups = LedgerWakeups(directory) { wakes.wake() }
        #expect(wakeups.isEventDriven, "\(wakeups.means)")
        #expect(wakeups.means == "woken by inotify and netlink")
        // Nothing changed yet: nothing wakes it (a second is plenty for a stray event to arrive).
        usleep(200_000)
        #expect(wakes.seen == 0)
        try Self.changes[index].change(directory)
        #expect(eventually(timeout: 5) { wakes.seen > 0 }, "\(Self.changes[index].name) woke nothing")
    }

    /// An unbound netlink socket joined to the route groups is never sent
    /// their messages (found by hand: `ip addr add` woke nothing), so the
    /// socket must be bound, which gives it a port id.
    @Test func theRouteSocketIsBoundSoThatTheGroupsMessagesReachIt() throws {
        let netlink = try #require(LedgerWakeups.routeSocket())
        defer { close(netlink) }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(netlink, $0, &length) }
        }
        #expect(named == 0)
        #expect(Int32(address.ss_family) == AF_NETLINK)
        // sockaddr_nl: family (2 bytes), padding (2), the port id (4).
        let portID = withUnsafeBytes(of: &address) { $0.load(fromByteOffset: 4, as: UInt32.self) }
        #expect(portID != 0, "the socket has no port id: it was never bound")
    }

    @Test func pollingWhenAskedListensToNothing() throws {
        let wakes = Wakes()
        let wakeups = LedgerWakeups(directory, polling: true) { wakes.wake() }
        #expect(!wakeups.isEventDriven)
        #expect(wakeups.means == "looks once a second (JQC_SYNC_WATCH=poll)")
        try "2".write(toFile: directory.path + "/store-head", atomically: false, encoding: .utf8)
        usleep(300_000)
        #expect(wakes.seen == 0)
    }

    /// No thread to listen on (`pthread_create` refused): the daemon looks
    /// once a second, and says why.
    @Test func noThreadToListenOnFallsBackToPolling() throws {
        let wakes = Wakes()
        let wakeups = LedgerWakeups(
            directory, polling: false,
            threads: { name, _ throws(ThreadStartFailure) in throw ThreadStartFailure(name: name, code: EAGAIN) }
        ) { wakes.wake() }
        #expect(!wakeups.isEventDriven)
        #expect(wakeups.means == "looks once a second (no thread could be started to listen for wakeups)")
        try "2".write(toFile: directory.path + "/store-head", atomically: false, encoding: .utf8)
        usleep(100_000)
        #expect(wakes.seen == 0)
    }

    @Test func aDirectoryThatCannotBeWatchedFallsBackToPolling() {
        let wakeups = LedgerWakeups(LedgerDirectory(path: temporary.appending("no-such-directory"))) {}
        #expect(!wakeups.isEventDriven)
        #expect(wakeups.means == "looks once a second (inotify is not available)")
    }
}
