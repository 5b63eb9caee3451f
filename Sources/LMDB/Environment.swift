import CLMDB
import FoundationEssentials
import Glibc

/// One LMDB environment (a directory holding `data.mdb` and `lock.mdb`).
///
/// The class owns the `MDB_env*`; a failed open frees what it half-made before
/// throwing, and `close()` is explicit. Transactions are closures, so none can
/// be left open: `write` commits when its closure returns and aborts when it
/// throws. The map is fixed and large (`defaultMapSize`): it only reserves
/// address space, so it never has to grow and a closure never runs twice.
/// Under an address-space limit it is sized to fit at each open (`AddressSpace`).
///
/// Opening is defensive: an existing `data.mdb` is checked (`StoreFile`)
/// before LMDB maps it, a missing one is created only with `Options.create`,
/// and LMDB's assertions end the process with a message (`StoreFaults`).
///
/// Environments are opened with `MDB_NOTLS`: a read transaction is not tied to
/// a thread's slot. A write transaction is still tied to the thread that began
/// it, which the closure form guarantees (it cannot cross an `await`).
/// Never use an environment in a child after `fork`.
///
/// `Sendable` as the compiler checks it: every stored property is a `let`
/// of a `Sendable` type, the C pointer (`MDB_env *`) included, since it
/// lives in `state`, a `ConditionLocked` that owns it with the rest of the
/// Swift state (the active-transaction count, the table cache). LMDB lets
/// one environment be used by many threads at once (its reader table and
/// writer mutex serialise them), which is how it is used here: with
/// `MDB_NOTLS` a read transaction may run on any thread, and a write
/// transaction begins, runs and ends inside one `write` call on one thread.
public final class Environment: Sendable {
    /// 1 TiB of address space on 64-bit systems (LMDB maps the file without
    /// allocating memory or disk for the rest), 1 GiB on 32-bit ones.
    public static let defaultMapSize = MemoryLayout<Int>.size == 8 ? 1 << 40 : 1 << 30

    /// The name LMDB gives the data file inside an environment's directory
    /// (fixed by LMDB itself; `LedgerLayout.storeData` refers to it).
    public static let dataFileName = "data.mdb"
    /// The name LMDB gives the lock file (`LedgerLayout.storeLock`).
    public static let lockFileName = "lock.mdb"

    /// How to open an environment.
    public struct Options: Sendable {
        /// The map size in bytes: the most the store can ever hold. Fixed for
        /// the life of the environment; a full map is an error, not a resize.
        public var mapSize: Int = Environment.defaultMapSize
        /// The largest number of named tables.
        public var maxTables: UInt32 = 64
        /// A generous reader table: every process and thread reading at once
        /// takes a slot, and `MDB_READERS_FULL` would refuse an auditor.
        public var maxReaders: UInt32 = 1022
        /// Open for reading only (an auditor's copy): no write transaction is
        /// ever begun and no table is created.
        public var readOnly: Bool = false
        /// With `readOnly`, also skip the lock file, for a copy on a read-only
        /// medium. Safe only when no other process writes to it.
        public var noLock: Bool = false
        /// Create the directory, `data.mdb` and missing tables when absent.
        /// Without it a missing store is an error (`LMDBError.Kind.missing`),
        /// never a new empty one.
        public var create: Bool = true

        public init() {}
    }

    /// What `info()` reports.
    public struct Info: Sendable {
        public var mapSize: Int
        public var lastPage: Int
        public var pageSize: Int
        public var readersUsed: Int
        public var maxReaders: Int
        public var lastTransaction: Int
    }

    public let path: String
    public let options: Options

    /// The environment's mutable state. The lock also serialises adopting
    /// another process's map size against this process's own transactions:
    /// `mdb_env_set_mapsize` may only be called when none is active.
    private struct State {
        /// Nil once closed.
        var handle: OpaquePointer?
        var faultSlot: Int?
        var activeTransactions = 0
        var resizing = false
        var tableCache: [String: Table] = [:]
    }

    private let state: ConditionLocked<State>

    /// The size `lock.mdb` is given up front: LMDB's reader table for
    /// `maxReaders` 1022 is 64 KiB. LMDB writes it through a shared map, where
    /// a full disk would raise SIGBUS; allocated first, a full disk is an error.
    static let lockFileSize: off_t = 65536

    /// Opens the environment at `directory` (creating it, with mode 0700 for
    /// the directory and 0600 for its files, only with `options.create`).
    public init(directory: String, options: Options = Options()) throws(LMDBError) {
        self.path = directory
        self.options = options
        let creates = options.create && !options.readOnly
        if creates {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw LMDBError(code: errno, operation: "creating the store directory \(directory)")
            }
        }
        switch StoreFile.check(directory: directory) {
        case .success:
            break
        case .failure(.missing):
            guard creates else {
                var isDirectory = false
                let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
                throw LMDBError(
                    code: ENOENT, operation: "opening the store at \(directory)",
                    message: exists && isDirectory
                        ? "\(Self.dataFileName) does not exist" : "the directory does not exist")
            }
        case .failure(.unreadable(let code)):
            throw LMDBError(code: code, operation: "reading \(directory)/\(Self.dataFileName)")
        case .failure(.damaged(let what)):
            throw LMDBError(code: MDB_CORRUPTED, operation: "checking \(directory)/\(Self.dataFileName)", message: what)
        }
        if !options.noLock {
            try Self.reserveLockFile(directory)
        }
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        // mdb_env_create returned 0: it set `env`.
        let slot = StoreFaults.register(environment: env!, directory: directory)
        do {
            try check(mdb_env_set_assert(env, storeAssertion), "mdb_env_set_assert")
            try check(mdb_env_set_maxdbs(env, options.maxTables), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
            try check(mdb_env_set_mapsize(env, try Self.mapSize(options, directory)), "mdb_env_set_mapsize")
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if options.readOnly && options.noLock { flags |= UInt32(MDB_NOLOCK) }
            try check(mdb_env_open(env, directory, flags, 0o600), "opening the LMDB environment at \(directory)")
            if let slot { StoreFaults.locateMaps(slot: slot, directory: directory) }
            if !(options.readOnly && options.noLock) {
                // Clear reader slots left by processes that died mid-read, so a
                // crashed command never pins old pages or fills the table.
                var dead: Int32 = 0
                try check(mdb_reader_check(env, &dead), "mdb_reader_check")
            }
        } catch {
            if let slot { StoreFaults.unregister(slot: slot) }
            mdb_env_close(env)
            if creates && (error.code == ENOSPC || error.code == ENOMEM) { Self.removeIfEmpty(directory) }
            // mmap's ENOMEM under a limit is the limit, whatever the estimate said.
            if error.code == ENOMEM, let limit = AddressSpace.limit,
                error.operation != "mapping the store at \(directory)"
            {
                throw AddressSpace.tooLarge(limit: limit, needed: Self.fileSize(directory), directory: directory)
            }
            throw error
        }
        state = ConditionLocked(State(handle: env, faultSlot: slot))
    }

    /// Allocates `lock.mdb` before LMDB maps it (see `lockFileSize`). A
    /// filesystem that cannot allocate ahead (or a read-only directory) is
    /// left to LMDB; only a full disk is an error.
    ///
    /// A missing lock file (deleted, or never made by a read-only open) is
    /// made here even when opening for reading, as LMDB would make it: left
    /// to LMDB it would be sparse, and on a full disk the first write
    /// through its map would be a SIGBUS instead of "no space". One made
    /// here that cannot be reserved is removed again.
    private static func reserveLockFile(_ directory: String) throws(LMDBError) {
        let lockPath = directory + "/" + Self.lockFileName
        var made = false
        var fd = open(lockPath, O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 && errno == ENOENT {
            fd = open(lockPath, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0o600)
            made = fd >= 0
        }
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        let rc = posix_fallocate(fd, 0, lockFileSize)
        if rc == ENOSPC || rc == EDQUOT {
            if made { unlink(lockPath) }
            throw LMDBError(code: rc, operation: "reserving the lock file \(lockPath)")
        }
    }

    /// The map to open with: `options.mapSize`, or less under an
    /// address-space limit (`AddressSpace`).
    private static func mapSize(_ options: Options, _ directory: String) throws(LMDBError) -> Int {
        try AddressSpace.mapSize(
            wanted: options.mapSize, fileSize: fileSize(directory), readOnly: options.readOnly, directory: directory)
    }

    /// The size of `data.mdb` (0 when there is none yet).
    private static func fileSize(_ directory: String) -> Int {
        var status = stat()
        return stat(directory + "/" + Self.dataFileName, &status) == 0 ? Int(status.st_size) : 0
    }

    /// Removes what a failed creation made (an empty store directory, a lock
    /// file and an empty `data.mdb`), so a full disk leaves nothing half-made.
    private static func removeIfEmpty(_ directory: String) {
        var status = stat()
        if stat(directory + "/" + Self.dataFileName, &status) == 0, status.st_size > 0 { return }
        unlink(directory + "/" + Self.dataFileName)
        unlink(directory + "/" + Self.lockFileName)
        rmdir(directory)
    }

    deinit { close() }

    /// Closes the environment. Every transaction must have ended; the closure
    /// API makes that so unless another thread is still inside one.
    public func close() {
        state.withLock { state in
            guard let handle = state.handle else { return }
            if let faultSlot = state.faultSlot { StoreFaults.unregister(slot: faultSlot) }
            state.faultSlot = nil
            mdb_env_close(handle)
            state.handle = nil
        }
    }

    private func env() throws(LMDBError) -> OpaquePointer {
        guard let handle = state.withLock({ $0.handle }) else {
            throw LMDBError(code: EINVAL, operation: "using a closed environment")
        }
        return handle
    }

    // MARK: - Tables

    /// The named table, created if needed when `create` (and the environment
    /// is writable and was opened with `Options.create`); otherwise a missing
    /// table is reported as `nil`.
    public func table(_ name: String, create: Bool = true) throws -> Table? {
        if let cached = state.withLock({ $0.tableCache[name] }) { return cached }
        // A table that exists opens in a read transaction: only creating one
        // needs the writer lock, which another process may hold for a while
        // (a rebuild) and every command would otherwise wait for at start-up.
        var opened = try read { txn throws(LMDBError) in try txn.openTable(name, create: false) }
        if opened == nil && create && !options.readOnly {
            opened = try write { txn throws(LMDBError) in try txn.openTable(name, create: true) }
        }
        if let opened { state.withLock { $0.tableCache[name] = opened } }
        return opened
    }

    // MARK: - Transactions

    /// Runs `body` in a read-only snapshot of the environment.
    public func read<T, E: Error>(_ body: (Transaction) throws(E) -> T) throws -> T {
        let txn = try begin(UInt32(MDB_RDONLY), "beginning a read transaction")
        defer { leave() }
        let transaction = Transaction(handle: txn, readOnly: true)
        do {
            let result = try body(transaction)
            // Commit rather than abort so tables opened in it stay usable.
            try check(mdb_txn_commit(txn), "ending a read transaction")
            return result
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// Runs `body` in a write transaction and commits it durably when `body`
    /// returns. `body` runs once: the map is fixed, so it never fills and
    /// retries (a full map or disk is an error, and nothing is committed).
    public func write<T, E: Error>(_ body: (Transaction) throws(E) -> T) throws -> T {
        guard !options.readOnly else {
            throw LMDBError(
                code: EACCES, operation: "beginning a write transaction", message: "the store was opened read-only")
        }
        let txn = try begin(0, "beginning a write transaction")
        defer { leave() }
        let transaction = Transaction(handle: txn, readOnly: false)
        let result: T
        do {
            result = try body(transaction)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // mdb_txn_commit frees the transaction whether or not it succeeds.
        try check(mdb_txn_commit(txn), "committing a write transaction")
        return result
    }

    /// Begins a transaction and counts it as active (the caller must `leave()`).
    /// If a process that set another map size wrote last, adopts that size
    /// first: nothing has run yet, so nothing runs twice.
    private func begin(_ flags: UInt32, _ operation: String) throws(LMDBError) -> OpaquePointer {
        let env = try env()
        try enter()
        var txn: OpaquePointer?
        var rc = mdb_txn_begin(env, nil, flags, &txn)
        if rc == MDB_MAP_RESIZED {
            leave()
            try adoptResizedMap()
            try enter()
            rc = mdb_txn_begin(env, nil, flags, &txn)
        }
        if rc != 0 {
            leave()
            throw LMDBError(code: rc, operation: operation)
        }
        // mdb_txn_begin returned 0: it set `txn`.
        return txn!
    }

    private func enter() throws(LMDBError) {
        state.withLock(when: { !$0.resizing }) { $0.activeTransactions += 1 }
    }

    private func leave() {
        state.withLock { $0.activeTransactions -= 1 }
    }

    /// Calls `body` when no transaction of this process is active, as
    /// `mdb_env_set_mapsize` requires.
    private func whileQuiescent(_ body: () throws(LMDBError) -> Void) throws(LMDBError) {
        // While `resizing` is set no transaction begins, so once the count
        // reaches zero it stays there until `body` has run.
        state.withLock(when: { !$0.resizing }) { $0.resizing = true }
        defer { state.withLock { $0.resizing = false } }
        try state.withLock(when: { $0.activeTransactions == 0 }) { (_: inout State) throws(LMDBError) in try body() }
    }

    private func adoptResizedMap() throws(LMDBError) {
        try whileQuiescent { () throws(LMDBError) in
            // A size of zero adopts the size another process has set; under
            // an address-space limit the map is sized again for the grown file.
            let size =
                AddressSpace.limit == nil
                ? 0
                : try AddressSpace.mapSize(
                    wanted: options.mapSize, fileSize: Self.fileSize(path), readOnly: options.readOnly, directory: path)
            try check(mdb_env_set_mapsize(try env(), size), "adopting the map size set by another process")
        }
    }

    // MARK: - Facts

    public func info() throws(LMDBError) -> Info {
        let env = try env()
        var info = MDB_envinfo()
        try check(mdb_env_info(env, &info), "mdb_env_info")
        var stat = MDB_stat()
        try check(mdb_env_stat(env, &stat), "mdb_env_stat")
        return Info(
            mapSize: info.me_mapsize, lastPage: info.me_last_pgno, pageSize: Int(stat.ms_psize),
            readersUsed: Int(info.me_numreaders), maxReaders: Int(info.me_maxreaders),
            lastTransaction: info.me_last_txnid)
    }

    /// How many read transactions hold a slot in the reader table right now,
    /// in any process (`mdb_reader_list`). `Info.readersUsed` cannot say: it
    /// is the most slots ever used, and freed slots stay counted.
    public func activeReaders() throws(LMDBError) -> Int {
        let env = try env()
        var count = 0
        let rc = withUnsafeMutablePointer(to: &count) { counter in
            mdb_reader_list(
                env,
                { message, context in
                    // One line per active reader ("  PID THREAD TXNID"), besides
                    // a header and "(no active readers)".
                    guard let message, let context else { return 0 }
                    let line = String(cString: message).drop { $0 == " " }
                    if line.first?.isNumber == true { context.assumingMemoryBound(to: Int.self).pointee += 1 }
                    return 0
                }, counter)
        }
        try check(rc, "listing the store's readers (mdb_reader_list)")
        return count
    }

    /// Writes a consistent copy of the environment into `directory`, compacted.
    public func copy(to directory: String) throws(LMDBError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw LMDBError(code: errno, operation: "creating \(directory)")
        }
        try check(
            mdb_env_copy2(try env(), directory, UInt32(MDB_CP_COMPACT)), "copying the environment to \(directory)")
        // LMDB creates the copy with the umask's mode; a store is private.
        chmod(directory + "/" + Self.dataFileName, 0o600)
    }
}
