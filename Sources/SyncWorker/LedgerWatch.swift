import FoundationEssentials
import Glibc
import InspectionStore
import LedgerStore
import Synchronization

/// What `jqc sync --daemon` looks at when something woke it
/// (`LedgerWakeups`) or, without notifications, once a second; cheaply (a
/// `stat` of a few files, no reading of the store): the ledger's `store-head`
/// (rewritten in place by every commit, so a submit is seen within a
/// second), `credentials.json` (a new `jqc login`), `config.json` (a new
/// server or witness), and the kernel's routes and addresses
/// (`/proc/net/route`, `/proc/net/if_inet6`: the network coming back).
public struct LedgerWatch: Sendable {
    /// What changed since the last look.
    public struct Changes: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Something was recorded (a submit, an answer, the daemon's own outcomes).
        public static let ledger = Changes(rawValue: 1)
        /// The saved session was replaced or removed.
        public static let session = Changes(rawValue: 2)
        /// The configuration changed.
        public static let config = Changes(rawValue: 4)
        /// A route or an address came or went.
        public static let network = Changes(rawValue: 8)
    }

    let ledgerFiles: [String]
    let sessionFile: String
    let configFile: String
    let networkFiles: [String]
    private var seen: [String: String] = [:]

    public init(_ directory: LedgerDirectory, networkFiles: [String] = ["/proc/net/route", "/proc/net/if_inet6"]) {
        ledgerFiles = [directory.storeHeadPath, directory.storeDataPath]
        sessionFile = directory.credentialsPath
        configFile = directory.configPath
        self.networkFiles = networkFiles
        _ = look()
    }

    /// What changed since the previous call (or since `init`).
    public mutating func look() -> Changes {
        var changes: Changes = []
        for path in ledgerFiles where note(path, Self.stamp(path)) { changes.insert(.ledger) }
        if note(sessionFile, Self.stamp(sessionFile)) { changes.insert(.session) }
        if note(configFile, Self.stamp(configFile)) { changes.insert(.config) }
        // procfs files have no useful times: their (small) text is the state.
        for path in networkFiles where note(path, Self.content(path)) { changes.insert(.network) }
        return changes
    }

    /// Records `value` for `path`; answers whether it differs from the last one.
    private mutating func note(_ path: String, _ value: String) -> Bool {
        defer { seen[path] = value }
        guard let previous = seen[path] else { return false }
        return previous != value
    }

    /// The file's modification time (ns), size and inode; "absent" when there is none.
    public static func stamp(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "absent" }
        return "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_size) \(info.st_ino)"
    }

    /// A procfs file's text, without the counters that change on their own (none in these two).
    /// Read with `read(2)` to the end: procfs reports a size of 0.
    static func content(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "absent" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65_536 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What wakes the background sync between looks, so that it sleeps without
/// polling: inotify on the ledger directory (a commit rewrites `store-head`
/// in place, a login or a config change renames `credentials.json` or
/// `config.json` into place) and a netlink route socket joined to the link,
/// address and route groups (the network coming back). Each notification
/// only calls `onEvent`; `LedgerWatch.look` still decides what changed, so
/// a notification about another file (the daemon's own status file) costs
/// one look and no pass.
///
/// One thread blocks in `poll(2)` on both descriptors for the daemon's life.
/// When either cannot be had (the limit of inotify instances reached, a
/// kernel or sandbox without netlink, or `JQC_SYNC_WATCH=poll`),
/// `isEventDriven` is false and the daemon looks once a second as before:
/// a change is never missed for want of a notification.
public final class LedgerWakeups: Sendable {
    /// Whether every change the daemon waits for (the ledger's files and
    /// the network) wakes it by itself: both descriptors were had and the
    /// thread still listens on them.
    public var isEventDriven: Bool { eventDriven && listening.load(ordering: .relaxed) }
    private let eventDriven: Bool
    private let listening = Atomic<Bool>(true)
    /// Whether the listening thread could be started (`pthread_create`
    /// can fail under a limit): without it the daemon looks once a second.
    private let listenerStarted = Atomic<Bool>(true)
    private let chosenMeans: String
    /// How the daemon learns of changes, for its first journal line.
    public var means: String {
        listenerStarted.load(ordering: .relaxed)
            ? chosenMeans : "looks once a second (no thread could be started to listen for wakeups)"
    }

    // netlink(7) and rtnetlink(7) numbers, which Glibc's module does not carry.
    static let netlinkSocketLevel: Int32 = 270  // SOL_NETLINK
    static let addMembership: Int32 = 1  // NETLINK_ADD_MEMBERSHIP
    static let routeProtocol: Int32 = 0  // NETLINK_ROUTE
    static let netlinkAddressSize = socklen_t(12)  // sizeof(struct sockaddr_nl)
    /// RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV6_ROUTE.
    static let routeGroups: [Int32] = [1, 5, 7, 9, 11]

    /// Starts listening, unless `polling` (the user's `JQC_SYNC_WATCH=poll`)
    /// asks for the once-a-second look.
    public convenience init(
        _ directory: LedgerDirectory, polling: Bool = false, onEvent: @escaping @Sendable () -> Void
    ) {
        self.init(directory, polling: polling, threads: DetachedThread.start, onEvent: onEvent)
    }

    /// The same, its listening thread started by `threads`.
    init(
        _ directory: LedgerDirectory, polling: Bool, threads: DetachedThread.Starter,
        onEvent: @escaping @Sendable () -> Void
    ) {
        guard !polling else {
            (eventDriven, chosenMeans) = (false, "looks once a second (JQC_SYNC_WATCH=poll)")
            return
        }
        let inotify = Self.watchDirectory(directory.path)
        let netlink = Self.routeSocket()
        switch (inotify, netlink) {
        case (.some, .some): (eventDriven, chosenMeans) = (true, "woken by inotify and netlink")
        case (.none, _): (eventDriven, chosenMeans) = (false, "looks once a second (inotify is not available)")
        case (.some, .none): (eventDriven, chosenMeans) = (false, "looks once a second (netlink is not available)")
        }
        let descriptors = [inotify, netlink].compactMap { $0 }
        guard !descriptors.isEmpty else { return }
        do throws(ThreadStartFailure) {
            try threads("jqc ledger wakeups") { [self] in
                Self.listen(descriptors, onEvent: onEvent)
                // Waking once more makes the daemon's next wait a polling one.
                self.listening.store(false, ordering: .relaxed)
                onEvent()
            }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            listening.store(false, ordering: .relaxed)
            listenerStarted.store(false, ordering: .relaxed)
        }
    }

    /// An inotify descriptor watching `path` (the directory itself, so a
    /// file renamed into place is seen), or nil when the kernel refuses one.
    static func watchDirectory(_ path: String) -> Int32? {
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        guard inotify >= 0 else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY | IN_CREATE | IN_DELETE | IN_ATTRIB)
        guard inotify_add_watch(inotify, path, mask) >= 0 else {
            close(inotify)
            return nil
        }
        return inotify
    }

    /// A netlink route socket joined to every group of `routeGroups`, or nil
    /// when the socket or any join is refused (then a network change would
    /// go unseen, so the daemon polls instead).
    static func routeSocket() -> Int32? {
        let netlink = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Self.routeProtocol)
        guard netlink >= 0 else { return nil }
        // Bound (port id and groups 0: the kernel picks the id), or the
        // groups' messages are never delivered. Glibc's module lacks
        // `sockaddr_nl`; it is `{family: u16, pad: u16, pid: u32, groups: u32}`,
        // so a zeroed `sockaddr_storage` with the family set is one.
        var address = sockaddr_storage()
        address.ss_family = sa_family_t(AF_NETLINK)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(netlink, $0, Self.netlinkAddressSize)
            }
        }
        guard bound == 0 else {
            close(netlink)
            return nil
        }
        for group in Self.routeGroups {
            var number = group
            let joined = setsockopt(
                netlink, Self.netlinkSocketLevel, Self.addMembership, &number, socklen_t(MemoryLayout<Int32>.size))
            guard joined == 0 else {
                close(netlink)
                return nil
            }
        }
        return netlink
    }

    /// Blocks on `descriptors`, drains what each has and calls `onEvent`
    /// once per wake; a descriptor that fails or ends is left out from then
    /// on (its events would be missed, so the thread ends and the daemon's
    /// wait times out as it would anyway).
    static func listen(_ descriptors: [Int32], onEvent: @Sendable () -> Void) {
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        while polled.contains(where: { $0.fd >= 0 }) {
            let ready = poll(&polled, nfds_t(polled.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in polled.indices where polled[index].revents != 0 {
                // The events' contents do not matter: `LedgerWatch.look` compares the files.
                let count = buffer.withUnsafeMutableBytes { read(polled[index].fd, $0.baseAddress, $0.count) }
                if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN && errno != ENOBUFS) {
                    polled[index].fd = -1
                }
                polled[index].revents = 0
            }
            onEvent()
        }
    }
}
