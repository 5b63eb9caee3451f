import CAllocator

/// How the C allocator grows the process's heaps. By default glibc extends
/// a heap by what is asked plus 128 KiB, and gives back what is freed at its
/// top: a rebuild's folds, growing to hundreds of megabytes, made thousands
/// of `brk` and `mprotect` calls and faulted pages in again after each
/// give-back. In 64 MiB steps a 1 M-event `jqc rebuild` took 0.97-0.98 of
/// the time (`Tools/bench`, wave 26).
enum HeapGrowth {
    /// What a heap grows by, and keeps at its top when memory is freed.
    static let step: Int32 = 64 << 20

    /// Every heap of the process, from now on, grows and keeps `step` at a
    /// time: for a process that ends when its work is done
    /// (`FoldMemory.leftToExit`), which needs no memory given back before
    /// its exit. Process-wide, as glibc's settings are. Answers whether the
    /// allocator took the setting (glibc takes this one; another C library
    /// may not, and then the heaps grow as before: slower, never wrong).
    @discardableResult
    static func inLargeSteps() -> Bool { mallopt(M_TOP_PAD, step) == 1 }
}
