import ArgumentParsing
import Testing

@Suite struct SplitArgumentsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var tokens: [ArgumentToken]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["--json"], tokens: [.long(name: "json", value: nil)]),
        Case(arguments: ["--since=2024-01-01"], tokens: [.long(name: "since", value: "2024-01-01")]),
        Case(arguments: ["--since=-3d"], tokens: [.long(name: "since", value: "-3d")]),
        Case(arguments: ["--description=a=b"], tokens: [.long(name: "description", value: "a=b")]),
        Case(arguments: ["--description="], tokens: [.long(name: "description", value: "")]),
        Case(arguments: ["-s"], tokens: [.short(["s"])]),
        Case(arguments: ["-fq"], tokens: [.short(["f", "q"])]),
        Case(arguments: ["show"], tokens: [.value("show")]),
        Case(arguments: ["-"], tokens: [.value("-")]),
        Case(arguments: ["-3"], tokens: [.value("-3")]),
        Case(arguments: ["-.5"], tokens: [.value("-.5")]),
        Case(arguments: [""], tokens: [.value("")]),
        Case(
            arguments: ["flag", "7", "--", "--severity", "-s", "--"],
            tokens: [.value("flag"), .value("7"), .terminator, .value("--severity"), .value("-s"), .value("--")]
        ),
        Case(
            arguments: ["--ledger", "/tmp/l", "show", "-j"],
            tokens: [.long(name: "ledger", value: nil), .value("/tmp/l"), .value("show"), .short(["j"])]
        ),
    ]

    @Test(arguments: cases)
    func splitsByShape(_ testCase: Case) {
        #expect(ArgumentToken.split(testCase.arguments) == testCase.tokens)
    }

    @Test(arguments: [
        ["--json"], ["--since=-3d"], ["-fq"], ["-"], ["--"], ["value"],
    ])
    func textRoundTrips(_ arguments: [String]) {
        #expect(ArgumentToken.split(arguments).map(\.text) == arguments)
    }

    @Test func emptyArgumentsGiveNoTokens() {
        #expect(ArgumentToken.split([]).isEmpty)
    }
}
