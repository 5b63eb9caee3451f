import CLMDB
import Foundation

/// One LMDB environment (a directory holding `data.mdb` and `lock.mdb`).
///
/// The class owns the `MDB_env*`; a failed open frees what it half-made before
/// throwing, and `close()` is explicit. Transactions are closures, so none can
/// be left open: `write` commits when its closure returns and aborts when it
/// throws. When the map fills, `write` grows it and runs the closure again, so
/// the closure must do nothing but work on its transaction.
///
/// Environments are opened with `MDB_NOTLS`: a read transaction is not tied to
/// a thread's slot. A write transaction is still tied to the thread that began
/// it, which the closure form guarantees (it cannot cross an `await`).
/// Never use an environment in a child after `fork`.
public final class Environment: @unchecked Sendable {
    /// How to open an environment.
    public struct Options: Sendable {
        /// Initial map size in bytes; it grows on demand.
        public var mapSize: Int = 64 << 20
        /// The largest number of named tables.
        public var maxTables: UInt32 = 64
        /// A generous reader table: every process and thread reading at once
        /// takes a slot, and `MDB_READERS_FULL` would refuse an auditor.
        public var maxReaders: UInt32 = 1022
        /// Open for reading only (an auditor's copy).
        public var readOnly: Bool = false
        /// With `readOnly`, also skip the lock file, for a copy on a read-only
        /// medium. Safe only when no other process writes to it.
        public var noLock: Bool = false
        /// Skip fsync at commit. Only for benchmarks of what fsync costs and
        /// for scratch data; never for a ledger.
        public var unsafeNoSync: Bool = false

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

    private var handle: OpaquePointer?
    public let path: String
    public let options: Options

    /// Serialises map resizing against this process's own transactions:
    /// `mdb_env_set_mapsize` may only be called when none is active.
    private let gate = NSCondition()
    private var activeTransactions = 0
    private var resizing = false
    private var tableCache: [String: Table] = [:]

    /// Opens (creating if needed, with mode 0700 for the directory and 0600
    /// for its files) the environment at `directory`.
    public init(directory: String, options: Options = Options()) throws(LMDBError) {
        self.path = directory
        self.options = options
        if !options.readOnly {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw LMDBError(code: errno, operation: "creating the ledger directory \(directory)")
            }
        }
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        do {
            try check(mdb_env_set_maxdbs(env, options.maxTables), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
            if !options.readOnly {
                try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize")
            }
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if options.readOnly && options.noLock { flags |= UInt32(MDB_NOLOCK) }
            if options.unsafeNoSync { flags |= UInt32(MDB_NOSYNC) }
            try check(mdb_env_open(env, directory, flags, 0o600), "opening the LMDB environment at \(directory)")
            if !(options.readOnly && options.noLock) {
                // Clear reader slots left by processes that died mid-read, so a
                // crashed command never pins old pages or fills the table.
                var dead: Int32 = 0
                try check(mdb_reader_check(env, &dead), "mdb_reader_check")
            }
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.handle = env
    }

    deinit { close() }

    /// Closes the environment. Every transaction must have ended; the closure
    /// API makes that so unless another thread is still inside one.
    public func close() {
        gate.lock()
        defer { gate.unlock() }
        if let handle {
            mdb_env_close(handle)
            self.handle = nil
        }
    }

    private func env() throws(LMDBError) -> OpaquePointer {
        guard let handle else { throw LMDBError(code: EINVAL, operation: "using a closed environment") }
        return handle
    }

    // MARK: - Tables

    /// The named table, created if needed (unless the environment is read-only,
    /// in which case a missing table is reported as `nil`).
    public func table(_ name: String) throws -> Table? {
        gate.lock()
        if let cached = tableCache[name] {
            gate.unlock()
            return cached
        }
        gate.unlock()
        // A table that exists opens in a read transaction: only creating one
        // needs the writer lock, which another process may hold for a while
        // (a rebuild) and every command would otherwise wait for at start-up.
        var opened = try read { txn throws(LMDBError) in try txn.openTable(name, create: false) }
        if opened == nil && !options.readOnly {
            opened = try write { txn throws(LMDBError) in try txn.openTable(name, create: true) }
        }
        if let opened {
            gate.lock()
            tableCache[name] = opened
            gate.unlock()
        }
        return opened
    }

    // MARK: - Transactions

    /// Runs `body` in a read-only snapshot of the environment.
    public func read<T, E: Error>(_ body: (Transaction) throws(E) -> T) throws -> T {
        try enter()
        defer { leave() }
        var txn: OpaquePointer?
        var rc = mdb_txn_begin(try env(), nil, UInt32(MDB_RDONLY), &txn)
        if rc == MDB_MAP_RESIZED {
            // Another process grew the map: adopt its size and begin again.
            try adoptResizedMap()
            rc = mdb_txn_begin(try env(), nil, UInt32(MDB_RDONLY), &txn)
        }
        try check(rc, "beginning a read transaction")
        let transaction = Transaction(handle: txn!, readOnly: true)
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
    /// returns. If the map fills, the map is doubled and `body` runs again.
    public func write<T, E: Error>(_ body: (Transaction) throws(E) -> T) throws -> T {
        while true {
            do {
                return try writeOnce(body)
            } catch let error as LMDBError where error.kind == .mapFull {
                try growMap()
            } catch let error as LMDBError where error.kind == .mapResized {
                try adoptResizedMap()
            }
        }
    }

    private func writeOnce<T, E: Error>(_ body: (Transaction) throws(E) -> T) throws -> T {
        try enter()
        defer { leave() }
        var txn: OpaquePointer?
        try check(mdb_txn_begin(try env(), nil, 0, &txn), "beginning a write transaction")
        let transaction = Transaction(handle: txn!, readOnly: false)
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

    private func enter() throws(LMDBError) {
        gate.lock()
        while resizing { gate.wait() }
        activeTransactions += 1
        gate.unlock()
    }

    private func leave() {
        gate.lock()
        activeTransactions -= 1
        gate.broadcast()
        gate.unlock()
    }

    /// Calls `body` when no transaction of this process is active, as
    /// `mdb_env_set_mapsize` requires.
    private func whileQuiescent(_ body: () throws(LMDBError) -> Void) throws(LMDBError) {
        gate.lock()
        while resizing { gate.wait() }
        resizing = true
        while activeTransactions > 0 { gate.wait() }
        defer {
            resizing = false
            gate.broadcast()
            gate.unlock()
        }
        try body()
    }

    private func growMap() throws(LMDBError) {
        try whileQuiescent { () throws(LMDBError) in
            let env = try env()
            var info = MDB_envinfo()
            try check(mdb_env_info(env, &info), "mdb_env_info")
            try check(mdb_env_set_mapsize(env, info.me_mapsize * 2), "growing the map to \(info.me_mapsize * 2) bytes")
        }
    }

    private func adoptResizedMap() throws(LMDBError) {
        try whileQuiescent { () throws(LMDBError) in
            // A size of zero adopts the size another process has set.
            try check(mdb_env_set_mapsize(try env(), 0), "adopting the map size set by another process")
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

    /// Flushes to disk; needed only after writes with `unsafeNoSync`.
    public func sync() throws(LMDBError) {
        try check(mdb_env_sync(try env(), 1), "mdb_env_sync")
    }

    /// Writes a consistent copy of the environment into `directory`, compacted.
    public func copy(to directory: String) throws(LMDBError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw LMDBError(code: errno, operation: "creating \(directory)")
        }
        try check(
            mdb_env_copy2(try env(), directory, UInt32(MDB_CP_COMPACT)), "copying the environment to \(directory)")
    }
}
