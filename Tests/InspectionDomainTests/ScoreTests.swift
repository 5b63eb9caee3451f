import InspectionDomain
import Testing

@Suite struct ScoreTests {
    /// Answers for template 11 "Restroom QC": 2–4 rating, 5–6 pass_fail,
    /// 7 checkbox, 8 radio (Good, Acceptable, Poor), 9 notes.
    static let cases: [(String, [FieldID: FieldValue], Double?)] = [
        ("nothing answered", [:], nil),
        ("only a field that does not score", ["9": .text("fine")], nil),
        ("rating 0 is unanswered", ["2": .rating(0)], nil),
        ("pass_fail empty is unanswered", ["5": .passFail(.unanswered)], nil),
        ("one rating of 4", ["2": .rating(4)], 80),
        ("ratings earn v/5", ["2": .rating(1), "3": .rating(2)], 30),
        ("a checked checkbox", ["7": .bool(true)], 100),
        ("an unchecked checkbox is answered and earns 0", ["7": .bool(false)], 0),
        ("radio Good passes", ["8": .option("Good")], 100),
        ("radio Acceptable passes", ["8": .option("Acceptable")], 100),
        ("radio Poor fails", ["8": .option("Poor")], 0),
        ("pass and fail", ["5": .passFail(.pass), "6": .passFail(.fail)], 50),
        ("unanswered fields are left out", ["2": .rating(5), "3": .rating(0), "6": .passFail(.unanswered)], 100),
        (
            "mixed: 0.8 + 1 + 1 + 0 of 4",
            ["2": .rating(4), "3": .rating(5), "5": .passFail(.pass), "6": .passFail(.fail)], 70
        ),
        ("two of three rounds up", ["5": .passFail(.pass), "6": .passFail(.pass), "7": .bool(false)], 66.67),
        ("one of three rounds down", ["5": .passFail(.pass), "6": .passFail(.fail), "7": .bool(false)], 33.33),
        (
            "every scoreable type together",
            [
                "2": .rating(3), "3": .rating(4), "4": .rating(5), "5": .passFail(.pass), "6": .passFail(.fail),
                "7": .bool(true), "8": .option("Poor"), "9": .text("n/a"),
            ],
            // (0.6 + 0.8 + 1 + 1 + 0 + 1 + 0) / 7 = 4.4 / 7 = 62.857…
            62.86
        ),
    ]

    @Test(arguments: cases)
    func scoresAsTheDomainSays(name: String, values: [FieldID: FieldValue], expected: Double?) throws {
        #expect(Score.compute(template: try Samples.restroom(), values: values) == expected, "\(name)")
    }

    @Test(arguments: ["pass", "YES", "ok", "Good", "acceptable", "Compliant"])
    func passWordsEarnAPoint(answer: String) {
        let template = Template(
            id: "1", name: "T", version: 1,
            fields: [TemplateField(id: "1", type: .radio, label: "Q", options: [answer, "other"])])
        #expect(Score.compute(template: template, values: ["1": .option(answer)]) == 100)
        #expect(Score.compute(template: template, values: ["1": .option("other")]) == 0)
    }

    /// 1 fifth earned of 32 answered: 100 × 0.2 / 32 = 0.625 exactly, a tie
    /// that rounds away from zero to 0.63. In binary floating point 0.2 is
    /// not exact, so the tie can land on either side depending on the order
    /// of operations; integer arithmetic always sees the tie.
    @Test func roundsHalfAwayFromZeroExactly() {
        var fields = [TemplateField(id: "1", type: .rating, label: "R")]
        var values: [FieldID: FieldValue] = ["1": .rating(1)]
        for n in 2...32 {
            let id = FieldID(rawValue: String(n))
            fields.append(TemplateField(id: id, type: .passFail, label: "P\(n)"))
            values[id] = .passFail(.fail)
        }
        let template = Template(id: "1", name: "T", version: 1, fields: fields)
        #expect(Score.hundredths(template: template, values: values) == 63)
        #expect(Score.compute(template: template, values: values) == 0.63)
    }

    @Test func valuesOfFieldsTheTemplateLacksDoNotScore() throws {
        #expect(Score.compute(template: try Samples.restroom(), values: ["99": .rating(5)]) == nil)
    }
}
