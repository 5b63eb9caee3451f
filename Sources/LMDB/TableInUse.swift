import CLMDB
import FoundationEssentials
import Glibc

/// Which table the calling thread's LMDB call is working on, so that an
/// assertion LMDB raises inside it (whose own text names only a C function)
/// can say which table's page is damaged (`StoreFaults`): a view's, which a
/// rebuild can replace, or the log's own.
///
/// Each table's name is interned once as a C string when the table is
/// opened; an operation on it stores that pointer in a thread-specific slot
/// for the length of the call (two `pthread_setspecific` calls, nothing
/// allocated).
enum TableInUse {
    nonisolated(unsafe) static var key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    static let lock = PosixLock()
    nonisolated(unsafe) static var interned: [String: UnsafeMutablePointer<CChar>] = [:]

    /// The interned C string of `label`, made once and kept for the process.
    static func intern(_ label: String) -> UInt {
        lock.lock()
        defer { lock.unlock() }
        if let pointer = interned[label] { return UInt(bitPattern: pointer) }
        guard let pointer = strdup(label) else { preconditionFailure("out of memory interning \(label)") }
        interned[label] = pointer
        return UInt(bitPattern: pointer)
    }

    /// The label an emptying of `name` runs under (`mdb_drop` walks the
    /// table's pages): the name after a U+0001.
    static func emptyingLabel(_ name: String) -> String { "\u{1}" + name }

    /// Runs `body` with `label` (an interned pointer) as the thread's table.
    @inline(__always)
    static func during<T, E: Error>(_ label: UInt, _ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: label))
        defer { pthread_setspecific(key, previous) }
        return try body()
    }

    /// The table the thread is working on, and whether it is emptying it.
    static var current: (table: String, emptying: Bool)? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        let label = String(cString: pointer.assumingMemoryBound(to: CChar.self))
        return label.hasPrefix("\u{1}") ? (String(label.dropFirst()), true) : (label, false)
    }
}
