import Foundation
import HTTPCore

/// An `HTTPTransport` over libcurl that keeps its connection alive between
/// requests.
///
/// One libcurl easy handle serves every request, so consecutive requests to
/// one server reuse one connection (HTTP/1.1 keep-alive, or HTTP/2 when TLS
/// negotiates it). A libcurl handle must never be used from two threads at
/// once, so `send` holds a lock for the whole transfer: concurrent callers
/// wait their turn. For transfers in parallel, make one client per thread.
///
/// - Redirects are never followed, for any method: a 301, 302, 303, 307 or
///   308 is reported as `TransportError.redirectRefused`, so a request and
///   its credentials reach only the URL the caller built. The API has no
///   reason to redirect; one means a wrong base URL or a captive portal.
/// - TLS peer and host name verification are always on. The only choice is
///   which certificate authorities to trust (`certificateAuthorityFile`).
/// - A request sent on a kept-alive connection that the server had already
///   closed is sent again once on a new connection by libcurl, when nothing
///   at all came back; write requests must carry an idempotency key anyway.
/// - Nothing is logged, and no error message contains a header value.
/// - Only `http` and `https` URLs are fetched.
public final class CurlHTTPClient: HTTPTransport, @unchecked Sendable {
    /// How the client connects. There is deliberately no setting that
    /// weakens TLS verification.
    public struct Configuration: Sendable, Equatable {
        /// The longest wait for a connection (TCP and TLS) to be set up.
        public var connectTimeout: Duration
        /// The longest a whole request may take, connecting and reading the
        /// response included. Uploads of large photos on slow networks need
        /// it to be generous.
        public var totalTimeout: Duration
        /// A PEM file of certificate authorities to trust instead of the
        /// system's (not in addition to them), for a server with a private
        /// or self-signed certificate.
        public var certificateAuthorityFile: String?
        public var userAgent: String

        public init(
            connectTimeout: Duration = .seconds(10), totalTimeout: Duration = .seconds(60),
            certificateAuthorityFile: String? = nil, userAgent: String = "jqc/0.1"
        ) {
            self.connectTimeout = connectTimeout
            self.totalTimeout = totalTimeout
            self.certificateAuthorityFile = certificateAuthorityFile
            self.userAgent = userAgent
        }
    }

    public let configuration: Configuration
    /// `@unchecked Sendable` rests on this: `handle` is only touched while
    /// `lock` is held.
    private let lock = NSLock()
    private let handle: EasyHandle

    /// Creates the libcurl handle (initialising libcurl on first use). Opens
    /// no connection: the first `send` does.
    public init(configuration: Configuration = Configuration()) throws(TransportError) {
        self.configuration = configuration
        self.handle = try EasyHandle()
    }

    /// Sends `request` and waits for the whole response; any status is a
    /// response. Blocks while another thread's request is in flight.
    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        try request.validate()
        lock.lock()
        defer { lock.unlock() }
        return try handle.perform(request, configuration)
    }

    /// How many connections this client has opened so far; fewer than the
    /// requests sent means connections were reused.
    public var connectionsOpened: Int {
        lock.lock()
        defer { lock.unlock() }
        return handle.connectionsOpened
    }
}
