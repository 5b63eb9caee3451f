import Foundation

/// What a benchmark's figures depend on, printed with them: the machine, the
/// commit, and whether the files were in the page cache.
enum MachineFacts {
    /// "2 cores, Intel(R) Xeon(R) …, Linux 6.1, commit abc1234".
    static func summary() -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let model = cpuModel() ?? "unknown CPU"
        var uts = utsname()
        uname(&uts)
        let kernel = withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(cores) cores, \(model), Linux \(kernel), commit \(commit())"
    }

    static func cpuModel() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// `BENCH_COMMIT`, else what git says of the working directory, marked
    /// `+dirty` when the tree has changes (figures of uncommitted code).
    static func commit() -> String {
        if let given = ProcessInfo.processInfo.environment["BENCH_COMMIT"], !given.isEmpty { return given }
        guard let head = capture(["git", "rev-parse", "--short=10", "HEAD"]) else { return "unknown" }
        let dirty = capture(["git", "status", "--porcelain", "--untracked-files=no"]).map { !$0.isEmpty } ?? false
        return head + (dirty ? "+dirty" : "")
    }

    private static func capture(_ argv: [String]) -> String? {
        let output = NSTemporaryDirectory() + "ledger-bench-git-\(getpid())"
        defer { unlink(output) }
        guard let status = try? CommandBenchmark.spawnAndWait(["/usr/bin/env"] + argv, stdout: output), status == 0,
            let data = FileManager.default.contents(atPath: output)
        else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Cold-cache runs: the files are dropped from the page cache with
/// `posix_fadvise(POSIX_FADV_DONTNEED)`, which needs no root. It only drops
/// clean pages that no process maps, so callers close their environments
/// first, and the residency is measured (with `mincore`) and printed rather
/// than assumed.
enum PageCache {
    /// Drops every file under `paths` (files or directories) from the cache.
    static func evict(_ paths: [String]) {
        for file in files(under: paths) {
            let fd = open(file, O_RDONLY)
            guard fd >= 0 else { continue }
            fdatasync(fd)
            posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(fd)
        }
    }

    /// The share of the files' pages that are in the page cache now (0…1).
    static func residentFraction(_ paths: [String]) -> Double {
        var resident = 0
        var total = 0
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        for file in files(under: paths) {
            let fd = open(file, O_RDONLY)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_size > 0 else { continue }
            let length = Int(info.st_size)
            guard let map = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { continue }
            defer { munmap(map, length) }
            let pages = (length + page - 1) / page
            var vector = [UInt8](repeating: 0, count: pages)
            guard mincore(map, length, &vector) == 0 else { continue }
            resident += vector.reduce(0) { $0 + Int($1 & 1) }
            total += pages
        }
        return total == 0 ? 0 : Double(resident) / Double(total)
    }

    private static func files(under paths: [String]) -> [String] {
        var result: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if !isDirectory.boolValue {
                result.append(path)
                continue
            }
            for name in (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? [] {
                let full = path + "/" + name
                var dir: ObjCBool = false
                if FileManager.default.fileExists(atPath: full, isDirectory: &dir), !dir.boolValue {
                    result.append(full)
                }
            }
        }
        return result
    }
}

/// The process's peak resident memory, reset before a measured step
/// (`/proc/self/clear_refs`, value 5, resets VmHWM since Linux 4.0).
enum PeakMemory {
    static func reset() {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return }
        _ = "5".withCString { write(fd, $0, 1) }
        close(fd)
    }

    /// VmHWM and the anonymous part of the current RSS, in MiB (file-backed
    /// pages of the memory-mapped store count in VmHWM too).
    static func read() -> (peak: Double, anonymous: Double) {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func value(_ key: String) -> Double {
            for line in text.split(separator: "\n") where line.hasPrefix(key) {
                let digits = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0"
                return (Double(digits) ?? 0) / 1024
            }
            return 0
        }
        return (value("VmHWM:"), value("RssAnon:"))
    }
}
