import FoundationEssentials
import Glibc

/// How large a map this process can hold: the map of an environment must fit
/// the process's address-space limit (`RLIMIT_AS`: `ulimit -v`, systemd's
/// `LimitAS=`), or `mmap` fails with `ENOMEM` and no command works.
///
/// Without a limit the map is the size asked for (`Environment.defaultMapSize`,
/// 1 TiB: only address space). Under a limit it is sized at each open, and
/// stays fixed for that open (no growth path: see docs/architecture/decisions.md):
/// a quarter of the limit (at least 256 MiB) and what the process has
/// mapped already are left for the rest of the process (threads' stacks and
/// heaps, libraries); a store opened for writing gets half of what remains,
/// so another store can still be opened beside it; one opened read-only
/// gets its file's size and a quarter more plus 64 MiB (room for what other
/// processes append while it is open), or what remains if that is less.
/// When the store's file alone does not fit, the open is refused with the
/// limit and the size needed (`LMDBError` with `ENOMEM`).
public enum AddressSpace {
    /// The process's address-space limit in bytes, or nil when unlimited.
    public static var limit: Int? {
        var limits = rlimit()
        // RLIM_INFINITY is all ones; Swift cannot import the C macro's -1.
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limits) == 0, limits.rlim_cur != rlim_t.max
        else { return nil }
        return limits.rlim_cur > rlim_t(Int.max) ? nil : Int(limits.rlim_cur)
    }

    /// What the process has mapped now (`/proc/self/statm`'s first field).
    static var mapped: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").first.flatMap({ Int($0) })
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The map size to open a store with: `wanted` without a limit, else what
    /// fits (see the type's notes). Throws when a store whose file holds
    /// `fileSize` bytes cannot be mapped at all.
    static func mapSize(wanted: Int, fileSize: Int, readOnly: Bool, directory: String) throws(LMDBError) -> Int {
        guard let limit else { return wanted }
        let reserve = max(256 << 20, limit / 4)
        let available = max(0, limit - mapped - reserve)
        let granule = 1 << 20
        let needed = (fileSize + granule - 1) / granule * granule
        let share = readOnly ? min(available, needed + needed / 4 + (64 << 20)) : available / 2
        let size = min(wanted, share / granule * granule)
        guard size >= needed, size > 0 else {
            throw tooLarge(limit: limit, needed: max(needed, granule), directory: directory)
        }
        return size
    }

    /// The error of a store that does not fit the limit.
    static func tooLarge(limit: Int, needed: Int, directory: String) -> LMDBError {
        LMDBError(
            code: ENOMEM, operation: "mapping the store at \(directory)",
            message: "this process may map at most \(describe(limit)) (its address-space limit: 'ulimit -v', "
                + "systemd's LimitAS=), and the ledger needs \(describe(needed)) of it for its store alone, besides "
                + "what the program itself needs")
    }

    /// Bytes as GiB (or MiB below one GiB), rounded to one decimal.
    static func describe(_ bytes: Int) -> String {
        let gib = Double(bytes) / Double(1 << 30)
        if gib >= 1 { return "\((gib * 10).rounded() / 10) GiB" }
        return "\(Int((Double(bytes) / Double(1 << 20)).rounded())) MiB"
    }
}
