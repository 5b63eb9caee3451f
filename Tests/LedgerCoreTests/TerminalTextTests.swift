import LedgerCore
import Testing

@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("Dana Inspector", "Dana Inspector"),
        ("Mallory\u{1B}[2K\rDana", "Mallory\\u{1B}[2K\\u{D}Dana"),
        ("hidden\u{1B}[8mtext", "hidden\\u{1B}[8mtext"),
        ("abc\u{202E}fed", "abc\\u{202E}fed"),
        ("bell\u{07}", "bell\\u{7}"),
        ("c1\u{9B}31m", "c1\\u{9B}31m"),
        ("two\nlines\tok", "two\nlines\tok"),
        ("café ☕︎", "café ☕︎"),
    ])
    func controlCharactersAreShownNotObeyed(input: String, expected: String) {
        #expect(TerminalText.safe(input) == expected)
    }

    @Test func singleLineEscapesNewlinesAndTabs() {
        #expect(TerminalText.singleLine("a\nb\tc\u{1B}") == "a\\nb\\tc\\u{1B}")
    }
}
