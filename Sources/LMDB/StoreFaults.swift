import CLMDB
import FoundationEssentials
import Glibc

/// Ends the process with a message and exit status 1, instead of a signal,
/// when LMDB meets a store it cannot read safely.
///
/// LMDB trusts its file: a page past the end of a truncated file raises
/// SIGBUS when touched through the map, and a page that is not what its
/// parent says trips an assertion that calls `abort()`. The pre-flight check
/// (`StoreFile`) catches what it can before mapping; what remains ends here:
/// - LMDB's assertion callback (set on every environment) prints the
///   wording's `damaged` message (or its `damagedTable` message for the
///   table the thread was working on, `TableInUse`) and exits 1;
/// - once `install` has run (the `jqc` executable does it first thing), a
///   SIGBUS or SIGSEGV inside an open environment's map prints that store's
///   message and exits 1. A fault in `lock.mdb` is a full disk (the lock file
///   is a sparse file written through its map) and says so with the free space.
///
/// A fault while no store is open is left to the default action: it is a
/// bug, not damage, and should crash visibly.
public enum StoreFaults {
    /// How the messages read; the CLI supplies its own words.
    public struct Wording: Sendable {
        /// The message for a damaged store: the store's path and what was found.
        public var damaged: @Sendable (_ store: String, _ what: String) -> String
        /// The message for a full disk: the store's path and the free space in KiB (as text).
        public var noSpace: @Sendable (_ store: String, _ freeKiB: String) -> String
        /// The message for damage met in one table (`TableInUse`): the
        /// store's path, the table, whether it was being emptied; nil to use
        /// `damaged` (the CLI words the views' tables, which a rebuild replaces).
        public var damagedTable: @Sendable (_ store: String, _ table: String, _ emptying: Bool) -> String?

        public init(
            damaged: @escaping @Sendable (String, String) -> String,
            noSpace: @escaping @Sendable (String, String) -> String,
            damagedTable: @escaping @Sendable (String, String, Bool) -> String? = { _, _, _ in nil }
        ) {
            self.damaged = damaged
            self.noSpace = noSpace
            self.damagedTable = damagedTable
        }

        public static let standard = Wording(
            damaged: { store, what in "the LMDB store at \(store) is damaged: \(what)" },
            noSpace: { store, free in "no space left on the device holding \(store) (\(free) KiB free)" })
    }

    /// Installs `wording` and the SIGBUS/SIGSEGV handlers (on an alternate
    /// stack). Call once, early, from an executable's entry point.
    public static func install(wording: Wording) {
        lock.lock()
        currentWording = wording
        lock.unlock()
        let stackSize = 1 << 16
        var stack = stack_t()
        stack.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: stackSize, alignment: 16)
        stack.ss_size = stackSize
        stack.ss_flags = 0
        sigaltstack(&stack, nil)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = faultHandler
        action.sa_flags = SA_SIGINFO | SA_ONSTACK
        sigemptyset(&action.sa_mask)
        sigaction(SIGBUS, &action, nil)
        sigaction(SIGSEGV, &action, nil)
    }

    // MARK: - The registry of open stores

    /// One open environment, in memory the signal handler can read without
    /// allocating or locking.
    struct Slot {
        var inUse: Bool
        var environment: UInt
        var dataStart: UInt
        var dataEnd: UInt
        var lockStart: UInt
        var lockEnd: UInt
        var damaged: UnsafeMutablePointer<UInt8>?
        var damagedLength: Int
        /// The no-space message, split where the number of KiB goes.
        var spaceBefore: UnsafeMutablePointer<UInt8>?
        var spaceBeforeLength: Int
        var spaceAfter: UnsafeMutablePointer<UInt8>?
        var spaceAfterLength: Int
        var directory: UnsafeMutablePointer<CChar>?
    }

    static let capacity = 32
    nonisolated(unsafe) static let slots: UnsafeMutablePointer<Slot> = {
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(
            repeating: Slot(
                inUse: false, environment: 0, dataStart: 0, dataEnd: 0, lockStart: 0, lockEnd: 0, damaged: nil,
                damagedLength: 0, spaceBefore: nil, spaceBeforeLength: 0, spaceAfter: nil, spaceAfterLength: 0,
                directory: nil),
            count: capacity)
        return slots
    }()
    static let lock = PosixLock()
    nonisolated(unsafe) static var currentWording = Wording.standard

    /// The directory of the open environment `environment` (the caller
    /// holds `lock`): read from its slot, where the fault handler reads it,
    /// so no dictionary is kept beside the slots.
    static func directory(of environment: UInt) -> String? {
        for index in 0..<capacity where slots[index].inUse && slots[index].environment == environment {
            return slots[index].directory.map { String(cString: $0) }
        }
        return nil
    }

    static func wording() -> Wording {
        lock.lock()
        defer { lock.unlock() }
        return currentWording
    }

    private static func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
        copy(bytes: Array(text.utf8))
    }

    private static func copy(bytes: [UInt8]) -> (UnsafeMutablePointer<UInt8>, Int) {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        buffer.initialize(from: bytes, count: bytes.count)
        return (buffer, bytes.count)
    }

    /// Registers an environment before it is opened, so an assertion during
    /// the open is reported too. Returns the slot, or nil when all are taken.
    static func register(environment: OpaquePointer, directory: String) -> Int? {
        let words = wording()
        lock.lock()
        defer { lock.unlock() }
        guard let index = (0..<capacity).first(where: { !slots[$0].inUse }) else { return nil }
        let damaged = copy(
            words.damaged(
                directory,
                "reading it ran into a damaged page or past the end of the file, and the process was stopped "
                    + "(SIGBUS/SIGSEGV) before anything was committed") + "\n")
        let marker = UInt8(1)
        let space = Array((words.noSpace(directory, String(UnicodeScalar(marker))) + "\n").utf8)
        // Split at the first marker byte, any other one left out (bytes, not
        // Foundation's `components`: that bridged through NSString at every open).
        let cut = space.firstIndex(of: marker)
        let before = copy(bytes: cut.map { Array(space[..<$0]) } ?? space)
        let after = copy(bytes: cut.map { space[($0 + 1)...].filter { $0 != marker } } ?? [])
        let dir = strdup(directory)
        slots[index] = Slot(
            inUse: false, environment: UInt(bitPattern: environment), dataStart: 0, dataEnd: 0, lockStart: 0,
            lockEnd: 0, damaged: damaged.0, damagedLength: damaged.1, spaceBefore: before.0,
            spaceBeforeLength: before.1, spaceAfter: after.0, spaceAfterLength: after.1, directory: dir)
        slots[index].inUse = true
        return index
    }

    /// Records where the environment's files are mapped (from /proc/self/maps
    /// on Linux), so a fault can be told apart from one in another store.
    static func locateMaps(slot index: Int, directory: String) {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return }
        // The kernel names a mapped file by its canonical path.
        let real =
            realpath(directory, nil).map { resolved in
                defer { free(resolved) }
                return String(cString: resolved)
            } ?? directory
        var data: (UInt, UInt) = (0, 0)
        var lockFile: (UInt, UInt) = (0, 0)
        let wanted = [Environment.dataFileName, Environment.lockFileName].map { Array($0.utf8) }
        for bytes in maps.utf8.split(separator: UInt8(ascii: "\n")) {
            // Only the store's two files are wanted: other lines are not split.
            guard wanted.contains(where: { bytes.reversed().starts(with: $0.reversed()) }) else { continue }
            let line = String(Substring(bytes))
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { continue }
            var file = String(fields[5])
            for field in fields[6...] { file += " " + field }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) else {
                continue
            }
            if file == real + "/" + Environment.dataFileName || file == directory + "/" + Environment.dataFileName {
                data = (start, end)
            }
            if file == real + "/" + Environment.lockFileName || file == directory + "/" + Environment.lockFileName {
                lockFile = (start, end)
            }
        }
        lock.lock()
        slots[index].dataStart = data.0
        slots[index].dataEnd = data.1
        slots[index].lockStart = lockFile.0
        slots[index].lockEnd = lockFile.1
        lock.unlock()
    }

    static func unregister(slot index: Int) {
        lock.lock()
        defer { lock.unlock() }
        // Marked free first: the handler never reads a slot not in use.
        slots[index].inUse = false
        let slot = slots[index]
        slot.damaged?.deallocate()
        slot.spaceBefore?.deallocate()
        slot.spaceAfter?.deallocate()
        free(slot.directory)
    }
}

/// Set on every environment: LMDB calls it on an inconsistency it can only
/// assert, and would `abort()` right after it returns, so it never returns.
func storeAssertion(_ environment: OpaquePointer?, _ message: UnsafePointer<CChar>?) {
    let text = message.map { String(cString: $0) } ?? "an internal check failed"
    let key = environment.map { UInt(bitPattern: $0) } ?? 0
    StoreFaults.lock.lock()
    let directory = StoreFaults.directory(of: key) ?? "(unknown)"
    let words = StoreFaults.currentWording
    StoreFaults.lock.unlock()
    let inTable = TableInUse.current.flatMap { words.damagedTable(directory, $0.table, $0.emptying) }
    let line = (inTable ?? words.damaged(directory, "LMDB found an inconsistent page (\(text))")) + "\n"
    let bytes = Array(line.utf8)
    _ = bytes.withUnsafeBytes { raw in Glibc.write(2, raw.baseAddress, raw.count) }
    _exit(1)
}

/// The SIGBUS/SIGSEGV handler: only async-signal-safe calls (write, statvfs,
/// _exit) on memory prepared in advance.
private func faultHandler(
    _ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?
) {
    let address = UInt(bitPattern: info?.pointee._sifields._sigfault.si_addr)
    let slots = StoreFaults.slots
    var chosen = -1
    var inLock = false
    var anyOpen = -1
    for index in 0..<StoreFaults.capacity where slots[index].inUse {
        if anyOpen < 0 { anyOpen = index }
        let slot = slots[index]
        if address >= slot.dataStart && address < slot.dataEnd {
            chosen = index
            break
        }
        if address >= slot.lockStart && address < slot.lockEnd {
            chosen = index
            inLock = true
            break
        }
    }
    // A damaged page can make LMDB follow a wild pointer outside the map:
    // while a store is open, a fault is taken to be its damage.
    if chosen < 0 { chosen = anyOpen }
    guard chosen >= 0 else {
        // Not a store's map: restore the default action; returning re-runs
        // the faulting instruction, which then ends the process as usual.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigaction(signal, &action, nil)
        return
    }
    let slot = slots[chosen]
    var free: UInt64 = 0
    var stats = statvfs()
    let knownFree = slot.directory.map { statvfs($0, &stats) == 0 } ?? false
    if knownFree { free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize) / 1024 }
    // A fault while the store is being opened (its maps not located yet)
    // on a full disk is LMDB writing its lock file through the map.
    if !inLock, knownFree, free == 0, slot.dataStart == 0, slot.lockStart == 0 { inLock = true }
    if inLock {
        _ = write(2, slot.spaceBefore, slot.spaceBeforeLength)
        // On the stack: malloc is not safe in a signal handler.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var count = 0
            repeat {
                digits[23 - count] = UInt8(48 + free % 10)
                free /= 10
                count += 1
            } while free > 0
            // A 24-byte buffer: never without an address.
            _ = write(2, digits.baseAddress! + (24 - count), count)
        }
        _ = write(2, slot.spaceAfter, slot.spaceAfterLength)
    } else {
        _ = write(2, slot.damaged, slot.damagedLength)
    }
    _exit(1)
}
