/// The inspection score, as the domain defines it and the server stores it.
///
/// Scoreable types: rating, checkbox, radio, pass_fail. Unanswered fields
/// (never set, cleared, rating 0, pass_fail "", radio "") are left out.
/// A rating `v` earns `v/5`; a checkbox earns 1 when true and 0 when false;
/// radio and pass_fail earn 1 when the answer is, ignoring case, one of the
/// pass words, else 0. The score is 100 × earned / answered, rounded half away
/// from zero to 2 decimals, or nil when nothing scoreable was answered.
public enum Score {
    /// The answers that earn a point for radio and pass_fail fields.
    public static let passWords: Set<String> = ["pass", "yes", "ok", "good", "acceptable", "compliant"]

    /// Computes the score of `values` under `template`.
    ///
    /// The arithmetic is in whole fifths of a point, then in hundredths of a
    /// percent, so the rounding is exact: a binary `Double` would make
    /// 100 × 2/3 → 66.67 depend on how 0.6666… happened to round first.
    public static func compute(template: Template, values: [FieldID: FieldValue]) -> Double? {
        guard let hundredths = hundredths(template: template, values: values) else { return nil }
        // An integer divided by 100 is correctly rounded by IEEE division, so
        // this is the Double closest to the two-decimal score.
        return Double(hundredths) / 100
    }

    /// The score in hundredths of a percent (8333 for 83.33), or nil.
    public static func hundredths(template: Template, values: [FieldID: FieldValue]) -> Int? {
        var earnedFifths = 0
        var answered = 0
        for field in template.fields where field.type.isScoreable {
            guard let value = values[field.id], let fifths = Self.earnedFifths(field.type, value) else { continue }
            earnedFifths += fifths
            answered += 1
        }
        guard answered > 0 else { return nil }
        // score = 100 × (earnedFifths / 5) / answered, in hundredths:
        // 10_000 × earnedFifths / (5 × answered), rounded half up (it is never negative).
        let numerator = 10_000 * earnedFifths
        let denominator = 5 * answered
        return (2 * numerator + denominator) / (2 * denominator)
    }

    /// What one answer earns, in fifths of a point, or nil when unanswered.
    static func earnedFifths(_ type: FieldType, _ value: FieldValue) -> Int? {
        switch (type, value) {
        case (.rating, .rating(let rating)):
            return rating == 0 ? nil : min(max(rating, 0), 5)
        case (.checkbox, .bool(let checked)):
            return checked ? 5 : 0
        case (.radio, .option(let answer)):
            return answer.isEmpty ? nil : (isPass(answer) ? 5 : 0)
        case (.passFail, .passFail(let answer)):
            switch answer {
            case .unanswered: return nil
            case .pass: return 5
            case .fail: return 0
            }
        default:
            // A value of another kind cannot come from a valid event; it is
            // not an answer this field understands.
            return nil
        }
    }

    static func isPass(_ answer: String) -> Bool {
        passWords.contains(answer.trimmingWhiteSpace.lowercased())
    }
}
