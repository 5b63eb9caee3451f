import Foundation

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
    /// A refusal with its own wording.
    case refused(String)

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
        case .refused(let message):
            message
        }
    }
}
