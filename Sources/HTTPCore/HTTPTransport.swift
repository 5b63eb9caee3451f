/// Sends one request and waits for its whole response.
///
/// Synchronous on purpose: the sync worker runs on a thread of its own and
/// sends one request at a time, so blocking is simple and costs nothing.
/// Any status is a response, 4xx and 5xx included; an error means no
/// complete response arrived (or a redirect was refused), and its
/// `isTransient` says whether trying again later can help.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse
}
