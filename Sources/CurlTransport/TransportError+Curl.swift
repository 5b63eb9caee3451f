import CCurl
import HTTPCore

extension TransportError {
    /// Sorts a libcurl result into the cases a caller acts on.
    ///
    /// `operation` names what was being done (`POST https://host/path`);
    /// `message` is curl's error buffer, or its generic text for the code.
    /// Both are redacted again when the error is printed.
    /// https://curl.se/libcurl/c/libcurl-errors.html
    init(curlCode code: CURLcode, message: String, operation: String, url: String) {
        let detail = "\(operation): \(message)"
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            self = .couldNotConnect(detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            self = .timedOut(detail: detail)
        // An empty reply, a reset or a truncated body: the request may have
        // been read, and acted on, before the connection went.
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2,
            CURLE_HTTP2_STREAM:
            self = .connectionLost(detail: detail)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            self = .tls(detail: detail)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            self = .invalidURL(url: Redaction.url(url), reason: message)
        default:
            self = .other(code: Int(code.rawValue), message: detail)
        }
    }
}
