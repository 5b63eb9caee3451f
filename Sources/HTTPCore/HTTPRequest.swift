/// An HTTP method. A struct rather than an enum, so a method this file does
/// not name can still be sent.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")

    public var description: String { rawValue }
}

/// One request, as plain values: what `HTTPTransport.send` puts on the wire.
///
/// Printing a request (`description`, `dump`, string interpolation) never
/// shows a credential: header values that carry one, a password in the URL
/// and the body's content are all left out (see `Redaction`).
public struct HTTPRequest: Sendable, Equatable {
    public var method: HTTPMethod
    /// An absolute `http` or `https` URL.
    public var url: String
    public var headers: HTTPHeaders
    public var body: HTTPBody
    /// Sent on a new connection, never a kept-alive one. A transport that
    /// reuses connections (libcurl) resends a request, unseen by its caller,
    /// when a reused connection dies before any byte of the answer arrives;
    /// for a write the server already committed, to a server that honours no
    /// `Idempotency-Key`, that resend makes a second record nobody can see.
    /// On a new connection the loss reaches the caller, who can look first.
    public var freshConnection: Bool
    /// The most bytes of body the answer may have. A transport refuses a
    /// longer one while it arrives (`TransportError.responseTooLarge`), so
    /// an endless or huge answer never fills memory.
    public var maximumResponseBytes: Int

    /// A JSON answer's limit when the caller names none: far above any
    /// answer of the API, far below what would hurt a device.
    public static let defaultMaximumResponseBytes = 8 << 20

    public init(
        method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: HTTPBody = .empty,
        freshConnection: Bool = false, maximumResponseBytes: Int = HTTPRequest.defaultMaximumResponseBytes
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.freshConnection = freshConnection
        self.maximumResponseBytes = maximumResponseBytes
    }
}

// MARK: - Printing, with credentials redacted

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request line, the headers and the body's size, as a log or an
    /// error report may show them.
    public var description: String {
        headers.printedMessage(firstLine: "\(method) \(Redaction.url(url))", body: body.description)
    }

    public var debugDescription: String { description }

    /// `dump` and debuggers see the redacted request, never the raw fields.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method.rawValue, "url": Redaction.url(url), "headers": headers.description,
                "body": body.description,
            ])
    }
}
