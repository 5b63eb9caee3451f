import Foundation
import LedgerCore
import Testing

@testable import LedgerStore

/// The store's head file is one checked line: read with the line breaks at
/// either end trimmed as Foundation's `CharacterSet.newlines` trims them,
/// and nothing else.
@Suite struct StoreHeadLineTests {
    /// A head whose line is checked, its hash 32 bytes of 0xAB.
    static func head() throws -> StoreHead {
        StoreHead(
            LedgerDigest(
                position: 1_000_324, head: try #require(Digest256(hex: String(repeating: "ab", count: 32)))))
    }

    /// Each break, alone or doubled, before or after the line.
    @Test(arguments: ["\n", "\r\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}", "\n\n"])
    func aLineAmongLineBreaksIsRead(around: String) throws {
        let head = try Self.head()
        let line = head.line.dropLast()
        #expect(StoreHead(line: around + line + around) == head)
        #expect(StoreHead(line: line + around) == head)
    }

    /// What is not a line break stays, and the check value then fails.
    @Test(arguments: [" ", "\t", "\u{A0}", "x", "\n\u{301}"])
    func anythingElseAroundTheLineRefusesIt(around: String) throws {
        let line = try Self.head().line.dropLast()
        #expect(StoreHead(line: line + around) == nil)
        #expect(StoreHead(line: around + line) == nil)
    }
}
