import Foundation
import LedgerTestSupport
import Testing

/// The CLI's own refusals, each a case of its own (`JQC_ERRORS=json`), where
/// they were all one catch-all that carried only its words: a script tells
/// them apart by kind, and the words a person reads stay what they were.
@Suite struct CLIRefusalKindTests {
    /// A refusal: the arguments, standard input, its kind, and the words `jqc:` says.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var input: String?
        var kind: String
        var words: String
        var testDescription: String { kind }
    }

    /// A server nobody answers on: the commands below refuse before they call it.
    static let server = "http://127.0.0.1:9"

    static let refusals: [Refusal] = [
        Refusal(
            arguments: ["whoami"], kind: "JQCError.nobodyLoggedIn",
            words: "Nobody is logged in on this ledger. Log in with 'jqc login' (or record with --as NAME, unverified)."
        ),
        Refusal(
            arguments: ["login", "--server", server], input: "", kind: "JQCError.noTerminalForUserName",
            words: "No terminal to ask for the user name. Pass it with --username USER."),
        Refusal(
            arguments: ["login", "--server", server, "--username", "dana"], input: "",
            kind: "JQCError.noTerminalForPassword",
            words: "No terminal to ask for the password. Pipe it in with --password-stdin (never as an argument)."),
        Refusal(
            arguments: ["login", "--server", server, "--username", "dana", "--password-stdin"], input: "",
            kind: "JQCError.emptyStandardInput",
            words: "No password on standard input (it was empty). Nothing was changed."),
        Refusal(
            arguments: ["login", "--server", server, "--username", "dana", "--password-stdin"], input: "\n",
            kind: "JQCError.emptyCredentials",
            words: "The login needs a user name and a password; one was empty. Nothing was changed."),
        Refusal(
            arguments: ["witness", "sync"], kind: "JQCError.noWitness",
            words: "no witness is configured: add one with 'jqc witness add URL --key VKEY'"),
        Refusal(
            arguments: ["verify", "--bundle", "BUNDLE", "--json"], kind: "JQCError.bundleCheckNotJSON",
            words: "verify --bundle prints the bundle tools' lines, not JSON: run it without --json (the exit status "
                + "says verified 0, not verified 1, unreadable 2)"),
    ]

    @Test(arguments: refusals)
    func eachRefusalHasItsKindAndItsWords(refusal: Refusal) throws {
        let directory = TemporaryDirectory(prefix: "cli-refusal")
        let jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        _ = try JQCRunner.succeeded(jqc("init"))
        let bundle = directory.appending("bundle.json")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: bundle))
        let arguments = refusal.arguments.map { $0 == "BUNDLE" ? bundle : $0 }
        let result = try jqc.run(arguments, input: refusal.input.map { Data($0.utf8) })
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.errorKind == refusal.kind, "\(result.stderr)")
        #expect(result.errorMessage == refusal.words)
    }

    /// A photo aimed at the signature field is refused naming the command
    /// that captures it, with a kind of its own and the field's id.
    @Test func aPhotoForTheSignatureFieldIsRefusedByKind() throws {
        let directory = TemporaryDirectory(prefix: "cli-refusal")
        let jqc = try JQCRunner.pulled(in: directory, name: "ledger").reportingKinds
        let id = try jqc.startInspection("Restroom QC")
        let picture = try SampleReference.writePNG(in: directory.path, name: "p.png")
        let refused = try jqc("--as", "Dana", "photo", id, "11", picture)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.errorKind == "PhotoCapture.FieldHoldsOtherKind", "\(refused.stderr)")
        #expect(refused.errorMessage?.hasSuffix("capture it with 'jqc sign \(id.prefix(8)) 11 FILE'.") == true)
    }
}
