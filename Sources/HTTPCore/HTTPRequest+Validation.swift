extension HTTPRequest {
    /// Headers that the transport writes from the body itself: a caller's
    /// value could only disagree with the bytes actually sent and break the
    /// framing of the connection.
    static let transportOwnedHeaders = ["content-length", "transfer-encoding"]

    /// Checks what a transport cannot send faithfully, before anything is sent.
    ///
    /// A header value with a line break would let one field inject others
    /// (or a second request), so it is refused rather than cleaned.
    public func validate() throws(TransportError) {
        try Self.validate(url: url)
        for field in headers.fields {
            try Self.validate(headerName: field.name)
            if field.value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                throw .invalidHeader(name: field.name, reason: "its value contains a line break or a NUL character")
            }
            if Self.transportOwnedHeaders.contains(field.name.lowercased()) {
                throw .invalidHeader(name: field.name, reason: "the transport sets it from the body")
            }
        }
        if case .multipart = body, headers.contains("Content-Type") {
            throw .invalidHeader(
                name: "Content-Type", reason: "a multipart body sets its own Content-Type, which names the boundary")
        }
    }

    static func validate(url: String) throws(TransportError) {
        let lowercased = url.lowercased()
        guard let schemeEnd = lowercased.firstRange(of: "://"),
            ["http", "https"].contains(lowercased[..<schemeEnd.lowerBound])
        else {
            throw .invalidURL(url: Redaction.url(url), reason: "it is not an absolute http or https URL")
        }
        if url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw .invalidURL(url: Redaction.url(url), reason: "it contains a space or a control character")
        }
        let authority = lowercased[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if host.isEmpty || host.hasPrefix(":") {
            throw .invalidURL(url: Redaction.url(url), reason: "it names no host")
        }
    }

    static func validate(headerName name: String) throws(TransportError) {
        // RFC 9110 §5.6.2: a field name is a token.
        let tokenPunctuation = Set("!#$%&'*+-.^_`|~".unicodeScalars)
        let isToken =
            !name.isEmpty
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || tokenPunctuation.contains(scalar))
            }
        if !isToken {
            throw .invalidHeader(
                name: Redaction.text(name),
                reason: "a header name must be a non-empty token of ASCII letters, digits and !#$%&'*+-.^_`|~")
        }
    }
}
