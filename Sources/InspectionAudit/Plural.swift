/// A count with its noun as the output says it: `1 photo`, `2 photos`,
/// `0 records`. One place, so that no line says "1 photos" (every noun the
/// output counts takes a plain -s).
public enum Plural {
    /// `n` and `noun`, the noun plural unless `n` is 1.
    public static func of(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
