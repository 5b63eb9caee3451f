import Dispatch
import HTTPCore
import Synchronization

/// An `HTTPTransport` over libcurl that keeps its connections alive between
/// requests.
///
/// The client holds `connections` libcurl easy handles (one by default).
/// Each request takes a free handle for the whole transfer and gives it
/// back, so up to `connections` requests run at once from as many threads,
/// each handle keeping its own connection to the server alive between
/// requests (HTTP/1.1 keep-alive, or HTTP/2 when TLS negotiates it). A
/// libcurl handle is never used from two threads at once; a caller finding
/// every handle busy waits for one.
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
/// - An answer's body longer than `HTTPRequest.maximumResponseBytes` is given
///   up while it arrives (`responseTooLarge`), so memory stays bounded.
/// - A raised `stop` ends every transfer within about a second (`stopped`).
/// - Nothing is logged, and no error message contains a header value.
/// - Only `http` and `https` URLs are fetched.
public final class CurlHTTPClient: HTTPTransport, Sendable {
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
    /// Handles not in use, and the connections each has opened so far (by
    /// its index), updated by the thread that used it.
    private let pool: Mutex<Pool>
    /// Counts the free handles, so a caller waits without spinning.
    private let free: DispatchSemaphore
    /// How many requests may be in flight at once.
    public let connections: Int
    /// Raised (by a signal), it ends every transfer within about a second
    /// and refuses new ones: `TransportError.stopped`.
    public let stop: StopRequest?

    private struct Pool: ~Copyable {
        var idle: [(index: Int, handle: EasyHandle)]
        var opened: [Int]
    }

    /// Creates `connections` libcurl handles (initialising libcurl on first
    /// use). Opens no connection: the first `send` on each handle does.
    public init(configuration: Configuration = Configuration(), connections: Int = 1, stop: StopRequest? = nil)
        throws(TransportError)
    {
        self.configuration = configuration
        self.stop = stop
        let count = max(1, connections)
        var idle: [(index: Int, handle: EasyHandle)] = []
        for index in 0..<count { idle.append((index, try EasyHandle())) }
        self.connections = count
        pool = Mutex(Pool(idle: idle, opened: Array(repeating: 0, count: count)))
        free = DispatchSemaphore(value: count)
    }

    /// Sends `request` and waits for the whole response; any status is a
    /// response. Blocks while every handle is busy with another request.
    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        try request.validate()
        // A caller waiting for a busy handle waits at most until the
        // transfers in flight notice the stop request; `perform` refuses then.
        free.wait()
        defer { free.signal() }
        // The semaphore guarantees a free handle is there.
        let (index, handle) = pool.withLock { $0.idle.removeLast() }
        defer {
            let opened = handle.connectionsOpened
            pool.withLock { pool in
                pool.opened[index] = opened
                pool.idle.append((index, handle))
            }
        }
        return try handle.perform(request, configuration, stop: stop)
    }

    /// How many connections this client has opened so far; fewer than the
    /// requests sent means connections were reused.
    public var connectionsOpened: Int { pool.withLock { $0.opened.reduce(0, +) } }
}
