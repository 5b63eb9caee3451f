import FoundationEssentials
import Glibc
import InspectionUseCases

/// Failures of the CLI itself (as opposed to the ledger's or the domain's own
/// errors, which `JQC.message(for:)` prints the same way). Messages say what failed, why,
/// and what to do.
public enum JQCError: Error, CustomStringConvertible {
    /// A file could not be read or parsed.
    case unreadableFile(String, String)
    /// A system call failed.
    case io(String, Int32)
    /// The ledger's own verification found a problem.
    case verificationFailed(String)
    /// A recording command has nobody to attribute the event to.
    case noActor
    /// An id or prefix that names nothing.
    case notFound(kind: String, reference: String, hint: String)
    /// A prefix that names more than one thing.
    case ambiguous(kind: String, reference: String, candidates: [String])
    /// `verify --bundle` with `--json`: the bundle tools print lines, not JSON.
    case bundleCheckNotJSON
    /// `whoami` on a ledger with no saved session.
    case nobodyLoggedIn
    /// Standard output could not be written (the `errno`; never EPIPE, a
    /// reader that went away): what the command printed is incomplete.
    case outputNotWritten(Int32)
    /// `login` given an empty user name or password.
    case emptyCredentials
    /// The server refused the user name or password; `serverSaid` is its answer, redacted.
    case loginRefused(serverSaid: String)
    /// `JQC_MAX_RESPONSE_BYTES` (`value`) is not a number of bytes ≥ 1024.
    case responseLimitInvalid(value: String)
    /// `restore-point clear` while a witness showed another copy of this
    /// device recording after the backup (`found`: what it showed).
    case restoreMarkStays(found: String)
    /// Items of this `jqc sync` failed for good (listed above it).
    case itemsFailedForGood
    /// The background sync's pass, made for this `jqc sync`, failed, in its
    /// words (a witness's alarm, a refused session, an unusable server, or
    /// no pass could run): the answer it hands over carries only the words.
    case backgroundPassFailed(String)
    /// `systemctl --user ARGUMENTS` failed or did not answer (`output`: what it said).
    case userManagerFailed(arguments: String, output: String)
    /// `witness cosign` with no witness in the list.
    case noWitness
    /// Fewer witnesses than the quorum cosigned.
    case quorumNotMet(cosigned: Int, quorum: Int)
    /// No terminal to ask for the user name, and no `--username`.
    case noTerminalForUserName
    /// No terminal to ask for the password, and no `--password-stdin`.
    case noTerminalForPassword
    /// Standard input held nothing where `what` (a user name, a password) was expected.
    case emptyStandardInput(what: String)

    /// The failure of a pass the background sync made for this `jqc sync`:
    /// its words for items failed for good are ``itemsFailedForGood``, as when
    /// `jqc sync` makes the pass itself.
    static func backgroundPass(failed failure: String) -> JQCError {
        failure == SyncService.Pass.failedForGoodAdvice ? .itemsFailedForGood : .backgroundPassFailed(failure)
    }

    public var description: String {
        switch self {
        case .unreadableFile(let path, let why):
            "cannot read \(path): \(why)"
        case .io(let what, let code):
            "\(what) failed: \(String(cString: strerror(code)))"
        case .verificationFailed(let what):
            what
        case .noActor:
            "nobody to record this as: log in with 'jqc login', or name yourself with --as NAME, JQC_ACTOR=NAME or "
                + "'jqc config set actor NAME' (recorded as unverified)."
        case .notFound(let kind, let reference, let hint):
            "no \(kind) matches '\(reference)'. \(hint)"
        case .ambiguous(let kind, let reference, let candidates):
            "'\(reference)' matches \(candidates.count) \(kind)s: \(candidates.prefix(5).joined(separator: ", "))"
                + "\(candidates.count > 5 ? ", …" : ""). Type more of the id."
        case .bundleCheckNotJSON:
            "verify --bundle prints the bundle tools' lines, not JSON: run it without --json (the exit status "
                + "says verified 0, not verified 1, unreadable 2)"
        case .nobodyLoggedIn:
            "Nobody is logged in on this ledger. Log in with 'jqc login' (or record with --as NAME, unverified)."
        case .outputNotWritten(let code):
            "could not write standard output: \(String(cString: strerror(code))). What this command printed is "
                + "incomplete (anything it recorded is kept); send its output where it can be written and run it again."
        case .emptyCredentials:
            "The login needs a user name and a password; one was empty. Nothing was changed."
        case .loginRefused(let serverSaid):
            "Login failed: the server refused the user name or password (\(serverSaid)). Check them and try again."
        case .responseLimitInvalid(let value):
            "JQC_MAX_RESPONSE_BYTES is '\(value)', not a number of bytes ≥ 1024. Set it to the largest "
                + "answer the server may send (e.g. 33554432 for 32 MiB), or unset it for 8 MiB."
        case .restoreMarkStays(let found):
            "the mark stays: a witness showed another copy of this device recording after the backup (\(found))"
        case .itemsFailedForGood:
            SyncService.Pass.failedForGoodAdvice
        case .backgroundPassFailed(let failure):
            failure
        case .userManagerFailed(let arguments, let output):
            "systemctl --user \(arguments) failed: \(output). The unit is written; run that command yourself to see why."
        case .noWitness:
            "no witness is configured: add one with 'jqc witness add URL --key VKEY'"
        case .quorumNotMet(let cosigned, let quorum):
            "the quorum was not met: \(cosigned) of \(quorum) witnesses needed cosigned"
        case .noTerminalForUserName:
            "No terminal to ask for the user name. Pass it with --username USER."
        case .noTerminalForPassword:
            "No terminal to ask for the password. Pipe it in with --password-stdin (never as an argument)."
        case .emptyStandardInput(let what):
            "No \(what) on standard input (it was empty). Nothing was changed."
        }
    }
}
