/// Keeps credentials out of everything this module prints.
///
/// Requests carry bearer tokens, login bodies carry passwords, and printed
/// text ends up in terminals, logs and bug reports. Every `description` in
/// this module goes through these functions, so a credential cannot reach
/// output by way of a request, a response or an error. Redaction errs on the
/// side of hiding: a field whose name merely suggests a secret is hidden too.
public enum Redaction {
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

    /// Free text (a library's error message, a server's message) as it may
    /// be printed: an authorization scheme's credential, a value after a
    /// credential's name (`password=…`, `"refresh_token": "…"`) and URLs are
    /// redacted.
    public static func text(_ text: String) -> String {
        // URLs first: the patterns below stop at the placeholder's "<",
        // so they cannot cut a URL short once its values are replaced.
        var result = text.replacing(#/[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+/#) { match in url(String(match.output)) }
        result = result.replacing(#/(?i)\b(bearer|basic|digest|token)(\s+)[^\s,;"'<>]+/#) { match in
            "\(match.output.1)\(match.output.2)\(placeholder)"
        }
        let namedCredential =
            #/
            (?i)
            ( [\w-]* (?: auth|token|password|passwd|secret|cookie|session|signature|api[-_]?key ) [\w-]* )
            ( "? \s* [=:] \s* "? )  # "=" or ":", perhaps between JSON quotes
            [^\s&,;"'<>]+
            /#
        return result.replacing(namedCredential) { match in "\(match.output.1)\(match.output.2)\(placeholder)" }
    }
}
