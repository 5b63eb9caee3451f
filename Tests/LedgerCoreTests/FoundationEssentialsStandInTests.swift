import Foundation
import Testing

@testable import LedgerCore

/// The jqc binary links only FoundationEssentials; these stand in for the
/// parts of Foundation it used, and each is held here to Foundation's own
/// answer (the test process links the whole of Foundation).
@Suite struct FoundationEssentialsStandInTests {
    /// Every Unicode scalar, each set as Foundation's `CharacterSet` has it.
    /// One test, the sets one after the other: two test cases asking
    /// Foundation's predefined sets at once on two threads crashed the test
    /// process (Linux's CoreFoundation makes them lazily).
    @Test func trimmedSpaceIsFoundationsSet() {
        for (space, foundation) in [
            (TrimmedSpace.spaces, CharacterSet.whitespaces),
            (TrimmedSpace.spacesAndNewlines, CharacterSet.whitespacesAndNewlines),
        ] {
            var differing: [UInt32] = []
            for value in UInt32(0)...0x10FFFF {
                guard let scalar = Unicode.Scalar(value) else { continue }
                if space.contains(scalar) != foundation.contains(scalar) { differing.append(value) }
            }
            #expect(differing.isEmpty, "\(space): \(differing.prefix(10).map { String($0, radix: 16) })")
        }
    }

    @Test(arguments: [
        "", " ", "a", " a ", "\ta\t", "\u{3000}name\u{200B}", "\n a \r\n", "\u{85}x\u{2028}", "a b", "  \u{0301}a",
        "e\u{0301} ", "\r\n", "x\r\n", "\u{FEFF}x\u{FEFF}", "\u{A0}\u{A0}",
    ])
    func trimmingIsFoundations(text: String) {
        #expect(text.trimming(.spaces) == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimming(.spacesAndNewlines) == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.dropFirst(0).trimming(.spaces) == text.trimmingCharacters(in: .whitespaces))
    }

    /// NSString's answers, written out: Linux's Foundation ends the process
    /// on `deletingLastPathComponent` of a path of one relative component
    /// ("a", "a/", "."), so its own answers cannot be asked for those.
    @Test(arguments: [
        ("", "", ""), ("/", "/", "/"), ("a", "a", ""), ("a/", "a", ""), ("a/b", "b", "a"), ("a/b/", "b", "a"),
        ("a//b", "b", "a"), ("/a", "a", "/"), ("/a/", "a", "/"), ("/a/b", "b", "/a"), ("/a/b//", "b", "/a"),
        ("./a", "a", "."), ("../a/b", "b", "../a"), ("/a/./b", "b", "/a/."), (".", ".", ""), ("..", "..", ""),
        ("~/x", "x", "~"), ("a/b/c.tmp-1", "c.tmp-1", "a/b"), ("/é/ü", "ü", "/é"),
    ])
    func pathTextIsNSStrings(path: String, last: String, parent: String) {
        #expect(PathText.lastComponent(path) == last, "last of \(path)")
        #expect(PathText.parent(path) == parent, "parent of \(path)")
    }

    @Test(
        arguments: [
            (0.0, 2), (0.125, 2), (0.135, 2), (2.5, 0), (3.5, 0), (-0.004, 2), (-1.005, 2), (1e21, 2), (99.995, 2),
            (0.0004, 3), (123.456789, 3), (.infinity, 2), (-.infinity, 2), (.nan, 2), (1.0 / 3, 17),
            (-Double.greatestFiniteMagnitude, 2), (Double.leastNonzeroMagnitude, 2),
        ] as [(Double, Int)])
    func fixedPointIsPrintfs(value: Double, places: Int) {
        #expect(FixedPoint.text(value, places: places) == String(format: "%.\(places)f", value))
    }
}
