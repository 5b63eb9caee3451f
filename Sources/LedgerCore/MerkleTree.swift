/// The Merkle tree over the log (RFC 9162 §2.1), the same tree as
/// Certificate Transparency's and Go's checksum database's (`sumdb/tlog`):
///
///     leaf       = SHA-256(0x00 ‖ record)
///     node(l, r) = SHA-256(0x01 ‖ l ‖ r)
///     MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of 2 below n
///
/// Leaves are numbered from 0: the record at position p is leaf p − 1.
/// Proof generation asks a `MerkleSource` for the hashes of the perfect
/// subtrees it needs, so the same code serves stored nodes (the store) and
/// hashes computed in memory (tests, a read-only old-format store).
public enum Merkle {
    /// The root of the empty tree: SHA-256 of nothing.
    public static func emptyRoot(_ hasher: SHA256Hasher = SHA256Hasher()) -> Digest256 { hasher.digest([]) }

    public static func node(_ left: Digest256, _ right: Digest256, _ hasher: SHA256Hasher) -> Digest256 {
        hasher.node(left, right)
    }

    /// The largest power of two smaller than `n` (n ≥ 2).
    static func split(_ n: UInt64) -> UInt64 {
        precondition(n >= 2, "bad math: a tree of \(n) leaves has no split")
        var k: UInt64 = 1
        while k << 1 < n { k <<= 1 }
        return k
    }

    /// The hash of leaves [start, start + size): perfect, aligned subtrees come
    /// from `perfect(level, index)` (the subtree of 2^level leaves starting at
    /// leaf index·2^level); other ranges are combined per RFC 9162.
    public static func hash(
        start: UInt64, size: UInt64, hasher: SHA256Hasher, perfect: (_ level: Int, _ index: UInt64) throws -> Digest256
    ) rethrows -> Digest256 {
        precondition(size > 0, "an empty range has no subtree")
        precondition(start <= UInt64.max - size, "bad math: leaves \(start) + \(size) overflow")
        if size & (size - 1) == 0, start % size == 0 {
            return try perfect(size.trailingZeroBitCount, start / size)
        }
        let k = split(size)
        let left = try hash(start: start, size: k, hasher: hasher, perfect: perfect)
        let right = try hash(start: start + k, size: size - k, hasher: hasher, perfect: perfect)
        return node(left, right, hasher)
    }

    /// The root of the first `size` leaves.
    public static func root(
        size: UInt64, hasher: SHA256Hasher, perfect: (_ level: Int, _ index: UInt64) throws -> Digest256
    ) rethrows -> Digest256 {
        size == 0 ? emptyRoot(hasher) : try hash(start: 0, size: size, hasher: hasher, perfect: perfect)
    }

    // MARK: - Proofs (RFC 9162 §2.1.3.1, §2.1.4.1)

    /// PATH(m, D[start:start+size]): the inclusion proof of leaf `m` (0-based)
    /// in the tree of `size` leaves, leaf's sibling first.
    public static func inclusionProof(
        leaf m: UInt64, size: UInt64, hasher: SHA256Hasher,
        perfect: (_ level: Int, _ index: UInt64) throws -> Digest256
    ) rethrows -> [Digest256] {
        precondition(m < size, "leaf \(m) is not in a tree of \(size)")
        var proof: [Digest256] = []
        var start: UInt64 = 0
        var size = size
        var path: [Digest256] = []
        // Walk down from the root, collecting the sibling of each step.
        while size > 1 {
            // The leaf stays inside the range walked down (start ≤ m < start + size).
            assert(m >= start && m - start < size, "bad math: leaf \(m) left the range")
            let k = split(size)
            if m - start < k {
                path.append(try hash(start: start + k, size: size - k, hasher: hasher, perfect: perfect))
                size = k
            } else {
                path.append(try hash(start: start, size: k, hasher: hasher, perfect: perfect))
                start += k
                size -= k
            }
        }
        proof = path.reversed()
        return proof
    }

    /// PROOF(m, D[n]): the consistency proof from the tree of `m` leaves to
    /// the tree of `n` leaves (0 < m ≤ n; empty when m == n).
    public static func consistencyProof(
        from m: UInt64, to n: UInt64, hasher: SHA256Hasher,
        perfect: (_ level: Int, _ index: UInt64) throws -> Digest256
    ) rethrows -> [Digest256] {
        precondition(m > 0 && m <= n, "no consistency proof from \(m) to \(n)")
        return try subproof(m: m, start: 0, size: n, complete: true, hasher: hasher, perfect: perfect)
    }

    static func subproof(
        m: UInt64, start: UInt64, size n: UInt64, complete b: Bool, hasher: SHA256Hasher,
        perfect: (_ level: Int, _ index: UInt64) throws -> Digest256
    ) rethrows -> [Digest256] {
        // The old tree is a non-empty prefix of the range (RFC 9162 §2.1.4.1: 0 < m ≤ n).
        precondition(m > 0 && m <= n, "bad math: subproof of \(m) leaves in a range of \(n)")
        if m == n {
            return b ? [] : [try hash(start: start, size: n, hasher: hasher, perfect: perfect)]
        }
        let k = split(n)
        if m <= k {
            return try subproof(m: m, start: start, size: k, complete: b, hasher: hasher, perfect: perfect)
                + [try hash(start: start + k, size: n - k, hasher: hasher, perfect: perfect)]
        }
        return try subproof(m: m - k, start: start + k, size: n - k, complete: false, hasher: hasher, perfect: perfect)
            + [try hash(start: start, size: k, hasher: hasher, perfect: perfect)]
    }

    // MARK: - Verifying (RFC 9162 §2.1.3.2, §2.1.4.2)

    /// Whether `proof` shows `leafHash` at index `m` of the tree of `size`
    /// leaves whose root is `root`.
    public static func verifyInclusion(
        leafHash: Digest256, leaf m: UInt64, size: UInt64, proof: [Digest256], root: Digest256,
        hasher: SHA256Hasher = SHA256Hasher()
    ) -> Bool {
        guard m < size else { return false }
        var fn = m
        var sn = size - 1
        var r = leafHash
        for p in proof {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                r = node(p, r, hasher)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                r = node(r, p, hasher)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && r == root
    }

    /// Whether `proof` shows the tree of `m` leaves with root `first` is a
    /// prefix of the tree of `n` leaves with root `second`.
    public static func verifyConsistency(
        from m: UInt64, to n: UInt64, first: Digest256, second: Digest256, proof: [Digest256],
        hasher: SHA256Hasher = SHA256Hasher()
    ) -> Bool {
        guard m <= n else { return false }
        if m == n { return proof.isEmpty && first == second }
        if m == 0 { return proof.isEmpty }
        guard !proof.isEmpty else { return false }
        var path = proof
        if m & (m - 1) == 0 { path.insert(first, at: 0) }
        var fn = m - 1
        var sn = n - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var fr = path[0]
        var sr = path[0]
        for c in path.dropFirst() {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                fr = node(c, fr, hasher)
                sr = node(c, sr, hasher)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                sr = node(sr, c, hasher)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && fr == first && sr == second
    }
}

/// The right edge of a growing tree: the roots of its perfect subtrees, largest
/// first, as the binary digits of its size give them. Appending a leaf merges
/// equal-sized subtrees; each merge is one stored node, amortised one per leaf.
public struct MerkleFrontier: Sendable {
    /// (level, index, hash) of each perfect subtree on the edge, largest first.
    public private(set) var subtrees: [(level: Int, index: UInt64, hash: Digest256)]
    public private(set) var size: UInt64

    public init(size: UInt64, subtrees: [(level: Int, index: UInt64, hash: Digest256)]) {
        self.size = size
        self.subtrees = subtrees
    }

    /// The perfect subtrees a tree of `size` leaves decomposes into, largest
    /// first: (level, index).
    public static func decomposition(of size: UInt64) -> [(level: Int, index: UInt64)] {
        var out: [(Int, UInt64)] = []
        var start: UInt64 = 0
        var bit = 63
        while bit >= 0 {
            let width = UInt64(1) << UInt64(bit)
            if size & width != 0 {
                out.append((bit, start >> UInt64(bit)))
                start += width
            }
            bit -= 1
        }
        assert(start == size, "bad math: the subtrees of \(size) cover \(start) leaves")
        return out
    }

    /// Adds a leaf; `store` is called for every new node of level ≥ 1.
    public mutating func append(
        leaf: Digest256, hasher: SHA256Hasher, store: (_ level: Int, _ index: UInt64, _ hash: Digest256) throws -> Void
    ) rethrows {
        var level = 0
        var index = size
        var hash = leaf
        while let last = subtrees.last, last.level == level {
            // Equal subtrees on the edge are siblings: the left one's index is the new one's minus one.
            assert(index & 1 == 1 && last.index == index - 1, "bad math: \(last.index) and \(index) at level \(level)")
            subtrees.removeLast()
            hash = Merkle.node(last.hash, hash, hasher)
            level += 1
            index >>= 1
            try store(level, index, hash)
        }
        subtrees.append((level, index, hash))
        size += 1
    }

    /// The root of the tree so far.
    public func root(_ hasher: SHA256Hasher) -> Digest256 {
        assert(subtrees.count == size.nonzeroBitCount, "bad math: \(subtrees.count) subtrees for \(size) leaves")
        guard var hash = subtrees.last?.hash else { return Merkle.emptyRoot(hasher) }
        for subtree in subtrees.dropLast().reversed() {
            hash = Merkle.node(subtree.hash, hash, hasher)
        }
        return hash
    }
}
