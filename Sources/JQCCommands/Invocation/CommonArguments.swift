import ArgumentParsing

// The arguments and options several commands take, spelled once so that
// their help reads the same wherever they appear.

extension PositionalSpec {
    /// `ID`: an inspection, by any unique prefix of its id.
    static let inspection = PositionalSpec("ID", help: "The inspection (any unique prefix of its id).")
    /// `ID`: a draft inspection, by any unique prefix of its id.
    static let draft = PositionalSpec("ID", help: "The draft inspection (any unique prefix of its id).")
}

extension OptionSpec {
    /// `--facility FACILITY`: a listing's filter.
    static let facility = OptionSpec("facility", valueName: "FACILITY", help: "Only this facility (its id or name).")

    /// `--since TIME`: a listing's filter on when its entries were `done`
    /// (started, completed).
    static func since(_ done: String) -> OptionSpec {
        OptionSpec(
            "since", valueName: "TIME", help: "Only those \(done) at or after this time (a date is its midnight, UTC).")
    }

    /// `--until TIME`, the other bound of `since`.
    static func until(_ done: String) -> OptionSpec {
        OptionSpec(
            "until", valueName: "TIME", help: "Only those \(done) at or before this time (a date is the whole day).")
    }
}
