import Synchronization

/// Keeps credentials out of everything this module prints.
///
/// Requests carry bearer tokens, login bodies carry passwords, and printed
/// text ends up in terminals, logs and bug reports. Every `description` in
/// this module goes through these functions, so a credential cannot reach
/// output by way of a request, a response or an error.
///
/// Free text is redacted by value: the secrets this process holds (the
/// session's tokens, a password typed at login) are registered with `hide`
/// and replaced wherever they appear, so a server's own words ("refresh token
/// already used") read as they were written. Headers, URLs and `name=value`
/// pairs are also redacted by the credential-like name they carry.
public enum Redaction {
    /// The secrets this process holds, replaced in all free text.
    private static let secrets = Mutex<Set<String>>([])

    /// Values shorter than this are not registered: replacing a common short
    /// string everywhere would garble text and hide nothing worth hiding.
    static let shortestSecret = 6

    /// Registers secrets (tokens, a password) to be replaced wherever they appear in free text.
    public static func hide(_ values: String...) {
        secrets.withLock { set in
            for value in values where value.count >= shortestSecret { set.insert(value) }
        }
    }

    /// What stands in place of a hidden value.
    public static let placeholder = "<redacted>"

    /// Name fragments that mark a header, a query parameter or a JSON key as
    /// holding a credential.
    static let credentialNameFragments = [
        "auth", "token", "password", "passwd", "secret", "cookie", "session", "signature", "api-key", "apikey",
        "api_key",
    ]

    /// Whether a header, query parameter or field named `name` holds a
    /// credential (`Authorization`, `Cookie`, `X-Auth-Token`, `password`).
    public static func isCredential(name: String) -> Bool {
        let lowercased = name.lowercased()
        return credentialNameFragments.contains { lowercased.contains($0) }
    }

    /// A header's value as it may be printed: `Authorization: Bearer abc`
    /// prints as `Bearer <redacted>`, keeping the scheme, which helps to
    /// debug and reveals nothing.
    public static func headerValue(_ value: String, name: String) -> String {
        guard isCredential(name: name) else { return value }
        let words = value.split(separator: " ", maxSplits: 1)
        if words.count == 2, words[0].allSatisfy({ $0.isLetter || $0 == "-" }) {
            return "\(words[0]) \(placeholder)"
        }
        return placeholder
    }

    /// A URL as it may be printed: the password (or a lone user name, which
    /// may be a token) in its user info and credential query parameters are
    /// replaced.
    public static func url(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return redactQuery(url) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            let host = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                authority = "\(userInfo[..<colon]):\(placeholder)@\(host)"
            } else {
                authority = "\(placeholder)@\(host)"
            }
        }
        return String(url[..<schemeEnd.upperBound]) + authority + redactQuery(String(rest[authorityEnd...]))
    }

    /// Replaces credential parameters in the query of a path such as
    /// `/x?access_token=abc#top`.
    static func redactQuery(_ pathAndQuery: String) -> String {
        guard let question = pathAndQuery.firstIndex(of: "?") else { return pathAndQuery }
        let afterQuestion = pathAndQuery.index(after: question)
        let fragmentStart = pathAndQuery[afterQuestion...].firstIndex(of: "#") ?? pathAndQuery.endIndex
        let parameters = pathAndQuery[afterQuestion..<fragmentStart].split(
            separator: "&", omittingEmptySubsequences: false
        )
        .map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "="), isCredential(name: String(parameter[..<equals]))
            else { return String(parameter) }
            return "\(parameter[..<equals])=\(placeholder)"
        }
        return String(pathAndQuery[...question]) + parameters.joined(separator: "&")
            + String(pathAndQuery[fragmentStart...])
    }

    /// The most of a free text that is kept, in Unicode scalars: a longer
    /// message (a proxy's error page, a server echoing a whole request) is
    /// cut there, saying how much was left out.
    public static let keptLength = 400

    /// Free text (a library's error message, a server's message) as it may
    /// be printed: every registered secret, an authorization scheme's
    /// credential (`Bearer …`), a `name=value` or `"name": "value"` pair whose
    /// name is a credential's, and URLs are redacted, and text longer than
    /// `keptLength` is cut ("… (N more characters not shown)"; the redacted
    /// part shown is at most half as long again, placeholders being
    /// longer). Plain words after "token" are left alone: "refresh token
    /// already used" reads as is.
    ///
    /// Linear in the length of the text, whatever it holds: the scan is by
    /// hand over bytes (see `FreeTextRedaction`), never a backtracking
    /// pattern, and reads no more than `keptLength` plus the longest secret
    /// and a margin; the rest is only counted.
    public static func text(_ text: String) -> String {
        Self.text(text, keeping: keptLength)
    }

    /// `text(_:)`, cutting after `limit` Unicode scalars.
    public static func text(_ text: String, keeping limit: Int) -> String {
        let held = secrets.withLock { Array($0) }
        return FreeTextRedaction(text, secrets: held, keeping: max(0, limit)).result
    }
}
