import FoundationEssentials
import Glibc

/// A structural check of an environment's `data.mdb`, made with plain reads
/// before LMDB maps it: LMDB trusts its file, so a truncated file or a
/// damaged meta page would otherwise end the process with SIGBUS or an
/// assertion instead of an error.
///
/// LMDB (0.9, `MDB_DATA_VERSION` 1) begins the file with two meta pages, page
/// 0 and page 1. Each starts with the 16-byte page header (`mp_pgno` u64,
/// `mp_pad` u16, `mp_flags` u16, `mp_lower`/`mp_upper` u16 each) and then
/// `MDB_meta`: `mm_magic` u32 (0xBEEFC0DE), `mm_version` u32, `mm_address`,
/// `mm_mapsize`, two `MDB_db` of 48 bytes (the first one's `md_pad` holds the
/// page size), `mm_last_pg` u64 and `mm_txnid` u64, in the machine's byte
/// order. A commit writes the meta page of `txnid % 2`, so in a healthy file
/// the two transaction ids are one apart (or both 0 before the first commit).
public enum StoreFile {
    /// What the meta pages say about a sane file.
    public struct Facts: Equatable, Sendable {
        public var pageSize: Int
        /// The last page in use, by the newest meta page.
        public var lastPage: UInt64
        /// The newest committed transaction.
        public var transaction: UInt64
        public var fileSize: Int
    }

    /// One meta page as read from the file.
    struct Meta {
        var pageNumber: UInt64
        var flags: UInt16
        var magic: UInt32
        var version: UInt32
        var pageSize: UInt32
        var lastPage: UInt64
        var transaction: UInt64
    }

    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let metaFlag: UInt16 = 0x08
    static let headerSize = 16

    /// Checks `directory/data.mdb`. A missing file is `.missing`; anything a
    /// healthy LMDB file would not show is `.damaged` with what is wrong.
    public static func check(directory: String) -> Result<Facts, Problem> {
        settled { checkOnce(directory: directory) }
    }

    /// The answer of `read` once two reads in a row name the same damage.
    ///
    /// The check reads the two meta pages one after the other, while another
    /// process may be committing: a writer that commits twice between the two
    /// reads makes a healthy file look like one whose transaction ids are not
    /// one apart (seen with two writers at once). Transaction ids only grow,
    /// so a second read that finds the very same damage saw no commit between
    /// them, and the damage is real; a different answer is read again, up to
    /// `attempts` reads, after which the last answer stands.
    static func settled(
        attempts: Int = 8, _ read: () -> Result<Facts, Problem>
    ) -> Result<Facts, Problem> {
        precondition(attempts >= 2, "damage is named only when two reads agree")
        var answer = read()
        for _ in 1..<attempts {
            guard case .failure(.damaged(let first)) = answer else { return answer }
            answer = read()
            if case .failure(.damaged(let second)) = answer, second == first { return answer }
        }
        return answer
    }

    /// One read of the meta pages and the file's size.
    static func checkOnce(directory: String) -> Result<Facts, Problem> {
        let path = directory + "/" + Environment.dataFileName
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(errno == ENOENT ? .missing : .unreadable(code: errno))
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(.unreadable(code: errno)) }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            return .failure(.damaged("\(Environment.dataFileName) is not a regular file"))
        }
        var size = Int(status.st_size)
        if size == 0 {
            return .failure(.damaged("\(Environment.dataFileName) is empty (0 bytes): its contents were lost"))
        }
        let first: Meta
        switch readMeta(fd, at: 0, fileSize: size) {
        case .success(let meta): first = meta
        case .failure(let problem): return .failure(problem)
        }
        if let fault = fault(of: first, number: 0) { return .failure(.damaged(fault)) }
        let pageSize = Int(first.pageSize)
        let second: Meta
        switch readMeta(fd, at: pageSize, fileSize: size) {
        case .success(let meta): second = meta
        case .failure(let problem): return .failure(problem)
        }
        if let fault = fault(of: second, number: 1) { return .failure(.damaged(fault)) }
        guard second.pageSize == first.pageSize else {
            return .failure(
                .damaged("the two meta pages disagree on the page size (\(first.pageSize) and \(second.pageSize))"))
        }
        let (older, newer) = first.transaction <= second.transaction ? (first, second) : (second, first)
        let fresh = older.transaction == 0 && newer.transaction == 0
        guard fresh || newer.transaction - older.transaction == 1 else {
            return .failure(
                .damaged(
                    "the meta pages' transaction ids (\(first.transaction) and \(second.transaction)) are not one "
                        + "apart, so one of them is damaged and the newest commit cannot be trusted"))
        }
        // Another process may have committed since the first fstat: the meta
        // pages read above can be newer than that size. LMDB writes a commit's
        // pages before its meta page, so the size taken now covers the newest
        // meta read; without this, recording during a sync saw "truncated".
        var now = stat()
        guard fstat(fd, &now) == 0 else { return .failure(.unreadable(code: errno)) }
        size = max(size, Int(now.st_size))
        let needed = (newer.lastPage + 1).multipliedReportingOverflow(by: UInt64(pageSize))
        guard !needed.overflow else {
            return .failure(.damaged("the newest meta page names an impossible last page (\(newer.lastPage))"))
        }
        guard UInt64(size) >= needed.partialValue else {
            return .failure(
                .damaged(
                    "\(Environment.dataFileName) is \(size) bytes but its newest commit uses \(needed.partialValue) "
                        + "(\(newer.lastPage + 1) pages of \(pageSize)): the file was truncated"))
        }
        return .success(
            Facts(pageSize: pageSize, lastPage: newer.lastPage, transaction: newer.transaction, fileSize: size))
    }

    /// Why a file failed the check.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case missing
        case unreadable(code: Int32)
        case damaged(String)

        public var description: String {
            switch self {
            case .missing: "\(Environment.dataFileName) does not exist"
            case .unreadable(let code): "\(Environment.dataFileName) cannot be read: \(String(cString: strerror(code)))"
            case .damaged(let what): what
            }
        }
    }

    static func readMeta(_ fd: Int32, at offset: Int, fileSize: Int) -> Result<Meta, Problem> {
        let length = headerSize + 136
        guard offset + length <= fileSize else {
            return .failure(
                .damaged(
                    "\(Environment.dataFileName) is only \(fileSize) bytes, too short to hold meta page \(offset == 0 ? 0 : 1): "
                        + "the file was truncated"))
        }
        var buffer = [UInt8](repeating: 0, count: length)
        let read = buffer.withUnsafeMutableBytes { raw in pread(fd, raw.baseAddress, length, off_t(offset)) }
        guard read == length else {
            return .failure(
                read < 0 ? .unreadable(code: errno) : .damaged("\(Environment.dataFileName) ended inside a meta page"))
        }
        func u16(_ at: Int) -> UInt16 {
            buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt16.self) }
        }
        func u32(_ at: Int) -> UInt32 {
            buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) }
        }
        func u64(_ at: Int) -> UInt64 {
            buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
        }
        let meta = headerSize
        return .success(
            Meta(
                pageNumber: u64(0), flags: u16(10), magic: u32(meta), version: u32(meta + 4),
                pageSize: u32(meta + 24), lastPage: u64(meta + 120), transaction: u64(meta + 128)))
    }

    /// What is wrong with meta page `number`, or nil when it looks sane.
    static func fault(of meta: Meta, number: Int) -> String? {
        let name = "meta page \(number)"
        if meta.magic != magic {
            return "\(name) does not hold LMDB's magic number: it was overwritten or this is not an LMDB file"
        }
        if meta.version != dataVersion {
            return "\(name) names LMDB data version \(meta.version), not \(dataVersion)"
        }
        if meta.pageNumber != UInt64(number) || meta.flags & metaFlag == 0 {
            return "\(name)'s header is damaged (page number \(meta.pageNumber), flags \(meta.flags))"
        }
        let size = meta.pageSize
        if size < 512 || size > 65536 || size & (size - 1) != 0 {
            return "\(name) names an impossible page size (\(size))"
        }
        if meta.lastPage < 1 {
            return "\(name) names an impossible last page (\(meta.lastPage))"
        }
        return nil
    }
}

extension StoreFile {
    /// Writes into `scratch` the copies of a damaged `directory/data.mdb` that
    /// LMDB can open, for salvage: for each sane meta page, a copy whose other
    /// meta page is replaced by it (with the transaction id just before, so
    /// LMDB takes the sane one as newest), padded with zeros to the size that
    /// meta page needs if the file was truncated. The original is only read.
    /// Answers the directories made, each holding one `data.mdb`.
    public static func salvageCopies(of directory: String, into scratch: String) throws -> [String] {
        let path = directory + "/" + Environment.dataFileName
        guard let original = FileManager.default.contents(atPath: path) else { return [] }
        var bytes = [UInt8](original)
        let fileSize = bytes.count
        var made: [String] = []
        var metas: [(number: Int, meta: Meta, offset: Int)] = []
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        if case .success(let first) = readMeta(fd, at: 0, fileSize: fileSize), fault(of: first, number: 0) == nil {
            metas.append((0, first, 0))
        }
        let secondOffset = metas.first.map { Int($0.meta.pageSize) } ?? 4096
        if case .success(let second) = readMeta(fd, at: secondOffset, fileSize: fileSize),
            fault(of: second, number: 1) == nil
        {
            metas.append((1, second, secondOffset))
        }
        for (number, meta, offset) in metas {
            let pageSize = Int(meta.pageSize)
            let needed = Int(meta.lastPage + 1) * pageSize
            var copy = bytes
            if copy.count < needed { copy += [UInt8](repeating: 0, count: needed - copy.count) }
            let other = number == 0 ? pageSize : 0
            var page = Array(copy[offset..<(offset + pageSize)])
            page.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: UInt64(number == 0 ? 1 : 0), toByteOffset: 0, as: UInt64.self)
                raw.storeBytes(
                    of: meta.transaction > 0 ? meta.transaction - 1 : 0, toByteOffset: headerSize + 128, as: UInt64.self
                )
            }
            copy.replaceSubrange(other..<(other + pageSize), with: page)
            let target = scratch + "/meta-\(number)"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            try Data(copy).write(to: URL(fileURLWithPath: target + "/" + Environment.dataFileName))
            made.append(target)
        }
        bytes = []
        return made
    }
}
