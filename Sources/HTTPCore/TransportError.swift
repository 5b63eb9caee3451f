/// Why a request got no complete response.
///
/// Details come from the transport (for libcurl, its error buffer) and are
/// passed through `Redaction` when printed, so a message never shows a
/// credential or a header value.
public enum TransportError: Error, Sendable, Equatable {
    /// No connection could be opened: the host name did not resolve, or
    /// nothing accepted the connection. Nothing was sent.
    case couldNotConnect(detail: String)
    /// The connect timeout or the total timeout ran out. The request may
    /// have reached the server.
    case timedOut(detail: String)
    /// The connection closed or failed before a complete response arrived
    /// (an empty reply, a reset). The server may have received and even
    /// committed the request.
    case connectionLost(detail: String)
    /// The TLS connection could not be set up, most often because the
    /// server's certificate is not trusted for its name, or the handshake
    /// failed. Verification is never bypassed, so nothing was sent.
    case tls(detail: String)
    /// The server answered with a redirect, which is never followed: a
    /// request and its credentials go only to the URL the caller chose.
    case redirectRefused(status: Int, location: String?)
    /// The URL cannot be sent: not absolute http(s), malformed, no host.
    case invalidURL(url: String, reason: String)
    /// A header cannot be sent as given.
    case invalidHeader(name: String, reason: String)
    /// The answer's body was longer than the request allowed
    /// (`HTTPRequest.maximumResponseBytes`); the transfer was given up as
    /// soon as that was known, and nothing of the answer is used.
    case responseTooLarge(url: String, limit: Int)
    /// A `StopRequest` was raised (a SIGINT or SIGTERM) before the answer
    /// was complete; `reason` names what raised it. The request may have
    /// reached the server.
    case stopped(reason: String, detail: String)
    /// Anything else the transport reports, with its own code.
    case other(code: Int, message: String)

    /// Whether the same request may succeed later without anyone changing
    /// anything: the network, a timeout or a lost connection. A refused
    /// certificate, a redirect or a bad request will fail the same way again.
    public var isTransient: Bool {
        switch self {
        case .couldNotConnect, .timedOut, .connectionLost: true
        case .tls, .redirectRefused, .invalidURL, .invalidHeader, .responseTooLarge, .stopped, .other: false
        }
    }

    /// Whether the server may have received the request despite the error,
    /// so that a retry must carry the same idempotency key.
    public var requestMayHaveReachedServer: Bool {
        switch self {
        case .timedOut, .connectionLost, .responseTooLarge, .stopped, .other: true
        case .couldNotConnect, .tls, .redirectRefused, .invalidURL, .invalidHeader: false
        }
    }
}

// MARK: - Messages: what failed, why, what to do

extension TransportError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .couldNotConnect(let detail):
            "Could not connect to the server (\(Redaction.text(detail))). The network is down or the server "
                + "address is wrong or unreachable; nothing was sent. Check the connection and the server "
                + "address; the request can be retried safely."
        case .timedOut(let detail):
            "The request timed out (\(Redaction.text(detail))). The network or the server is too slow or "
                + "unreachable. Try again later; the server may have received the request, so a retry must "
                + "carry the same idempotency key."
        case .connectionLost(let detail):
            "The connection was lost before a complete response arrived (\(Redaction.text(detail))). The "
                + "server may have received and committed the request. Try again with the same idempotency key."
        case .tls(let detail):
            "The secure connection could not be set up (\(Redaction.text(detail))). The server's certificate "
                + "was not trusted for its name, or the TLS handshake failed (as when an https URL names a server "
                + "that speaks plain http); nothing was sent. Check the server address and the system clock, or "
                + "configure the certificate authority that signed the server's certificate; certificate "
                + "verification is never turned off."
        case .redirectRefused(let status, let location):
            "The server answered \(status), redirecting to \(location.map(Redaction.url) ?? "an unnamed location"). "
                + "Redirects are never followed, so that requests and credentials reach only the configured "
                + "server. Check the server address (http or https, the path prefix)."
        case .invalidURL(let url, let reason):
            "The URL \(Redaction.url(url)) cannot be used: \(Redaction.text(reason)). Check the server address in the "
                + "configuration."
        case .invalidHeader(let name, let reason):
            "The request header \(Redaction.text(name)) cannot be sent: \(reason). This is a bug in the "
                + "program building the request; report it."
        case .responseTooLarge(let url, let limit):
            "The answer to \(Redaction.url(url)) was longer than the limit of \(Self.size(limit)), so it was "
                + "given up while it arrived and none of it was used. A proxy's page or a misbehaving server "
                + "sends such answers; check the server address. If the server's data really is that large, "
                + "raise the limit (JQC_MAX_RESPONSE_BYTES=N, in bytes)."
        case .stopped(let reason, let detail):
            "The request was stopped by \(reason) before its answer was complete (\(Redaction.text(detail))). "
                + "The server may have received it."
        case .other(let code, let message):
            "The request failed (\(Redaction.text(message)), transport code \(code)). Try again; if it keeps "
                + "failing, report this message."
        }
    }

    /// `8 MiB (8388608 bytes)`: the limit as set, and as a person reads it.
    static func size(_ bytes: Int) -> String {
        for (unit, name) in [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        where bytes >= unit && bytes % unit == 0 {
            return "\(bytes / unit) \(name) (\(bytes) bytes)"
        }
        return "\(bytes) bytes"
    }
}
