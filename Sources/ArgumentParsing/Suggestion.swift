/// "Did you mean" guesses for mistyped command and option names.
///
/// Public so a CLI can offer the same kind of guess for its own vocabularies (template names, field names).
public enum Suggestion {
    /// The candidate the user most likely meant, or nil when none is close enough to be worth suggesting.
    ///
    /// Close enough means a few typos away (about one per three letters, counting a swap of neighbours as one) or,
    /// for three letters or more, the start of a candidate. Ties go to the earlier candidate, so declaration
    /// order decides.
    public static func closest(to typed: String, among candidates: [String]) -> String? {
        let typedLower = typed.lowercased()
        guard !typedLower.isEmpty else { return nil }
        var best: (candidate: String, score: Int)?
        for candidate in candidates {
            let candidateLower = candidate.lowercased()
            let isPrefix = typedLower.count >= 3 && candidateLower.hasPrefix(typedLower)
            let score = isPrefix ? 0 : editDistance(typedLower, candidateLower)
            let allowed = max(1, min(typedLower.count, candidateLower.count) / 3)
            guard score <= allowed else { continue }
            if let current = best, current.score <= score { continue }
            best = (candidate, score)
        }
        return best?.candidate
    }

    /// The number of single-character insertions, deletions, substitutions and swaps of adjacent characters
    /// that turn `a` into `b` (optimal string alignment distance). Swaps count once because `sumbit` is one
    /// slip of the fingers, not two.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        let width = b.count + 1
        // Row-major table of distances between prefixes of a (rows) and b (columns).
        var table = [Int](repeating: 0, count: (a.count + 1) * width)
        for i in 0...a.count { table[i * width] = i }
        for j in 0...b.count { table[j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var distance = min(
                    table[(i - 1) * width + j] + 1,
                    table[i * width + j - 1] + 1,
                    table[(i - 1) * width + j - 1] + cost
                )
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    distance = min(distance, table[(i - 2) * width + j - 2] + 1)
                }
                table[i * width + j] = distance
            }
        }
        return table[a.count * width + b.count]
    }
}
