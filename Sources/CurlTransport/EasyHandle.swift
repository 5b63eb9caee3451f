import CCurl
import HTTPCore

/// One libcurl easy handle and the error buffer it writes into.
///
/// The handle is reused for every request so that libcurl keeps the
/// connection open between them; `curl_easy_reset` clears the previous
/// request's options but "does not change live connections, the Session ID
/// cache, the DNS cache" (https://curl.se/libcurl/c/curl_easy_reset.html).
/// Not thread-safe, and used by one thread at a time: `CurlHTTPClient`'s
/// pool (a `Mutex`) owns every idle handle and hands each to one caller for
/// one transfer. `@unchecked Sendable` rests on that hand-over, and lets the
/// handle move between the pool and the thread using it.
final class EasyHandle: @unchecked Sendable {
    /// The `CURL *`, which Swift imports as a raw pointer.
    private let handle: UnsafeMutableRawPointer
    /// Where libcurl writes a readable message for a failed call; it must
    /// outlive every transfer, so it lives as long as the handle.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Connections opened over the handle's life: CURLINFO_NUM_CONNECTS
    /// counts the new ones each transfer had to make.
    private(set) var connectionsOpened = 0

    /// Redirect statuses; 300 and 304 are answers, not redirects.
    private static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    init() throws(TransportError) {
        try CurlLibrary.initialize()
        // The handle is the only thing here that can fail to be made, and it
        // is made first, so a failure leaves nothing to free.
        guard let handle = ccurl_easy_init() else {
            throw .other(
                code: Int(CURLE_FAILED_INIT.rawValue),
                message: "creating a libcurl handle (curl_easy_init): libcurl could not allocate it")
        }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        ccurl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    // MARK: - One transfer

    /// Sends `request` and collects the whole response, unless `stop` is
    /// raised first (checked before anything is sent, then by libcurl's
    /// progress callback, at least about once a second).
    func perform(_ request: HTTPRequest, _ configuration: CurlHTTPClient.Configuration, stop: StopRequest?)
        throws(TransportError) -> HTTPResponse
    {
        let operation = "\(request.method) \(Redaction.url(request.url))"
        if let reason = stop?.reason {
            throw .stopped(reason: reason, detail: "\(operation): not sent")
        }
        var headerList: UnsafeMutablePointer<curl_slist>?
        var form: OpaquePointer?
        defer {
            // Detach the list and the form from the handle before freeing
            // them, so the handle never holds a dangling pointer, not even
            // until the next request or `curl_easy_cleanup`.
            ccurl_easy_reset(handle)
            ccurl_slist_free_all(headerList)
            ccurl_mime_free(form)
        }
        ccurl_easy_reset(handle)
        errorBuffer[0] = 0
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer), operation)
        try setCommonOptions(request, configuration, operation)
        headerList = try makeHeaderList(request, operation)
        try set(CURLOPT_HTTPHEADER, list: headerList, operation)
        form = try setMethodAndBody(request, operation)

        let collector = ResponseCollector(bodyLimit: request.maximumResponseBytes, stop: stop)
        try setCallbacks(context: Unmanaged.passUnretained(collector).toOpaque(), operation)
        let code = withExtendedLifetime(collector) { ccurl_easy_perform(handle) }
        // Counted before a failure is thrown: a transfer that timed out may
        // still have opened a connection.
        var connects = 0
        let connectsCode = ccurl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects)
        if connectsCode == CURLE_OK { connectionsOpened += connects }
        // The collector's own refusals come back as a write error or an
        // aborted transfer; it knows which and why.
        switch collector.refusal {
        case .tooLarge:
            throw .responseTooLarge(url: Redaction.url(request.url), limit: collector.bodyLimit)
        case .stopped(let reason):
            stop?.noteTransferStopped()
            throw .stopped(reason: reason, detail: "\(operation): given up mid-transfer")
        case nil:
            break
        }
        try check(code, operation, url: request.url)
        try check(connectsCode, operation)

        let status = try info(CURLINFO_RESPONSE_CODE, operation)
        if Self.redirectStatuses.contains(status) {
            let location = try stringInfo(CURLINFO_REDIRECT_URL, operation) ?? collector.headers["Location"]
            throw .redirectRefused(status: status, location: location.map(Redaction.url))
        }
        return HTTPResponse(status: status, headers: collector.headers, body: collector.body)
    }

    /// Options every request gets, set again after each reset.
    private func setCommonOptions(
        _ request: HTTPRequest, _ configuration: CurlHTTPClient.Configuration, _ operation: String
    ) throws(TransportError) {
        try set(CURLOPT_URL, string: request.url, operation)
        // Nothing but HTTP(S), whatever the URL says.
        try set(CURLOPT_PROTOCOLS_STR, string: "http,https", operation)
        // Never follow a redirect (also libcurl's default, set to say so):
        // a 3xx becomes `redirectRefused`.
        try set(CURLOPT_FOLLOWLOCATION, 0, operation)
        // libcurl otherwise uses signals for DNS timeouts, which is unsafe in
        // a threaded program. https://curl.se/libcurl/c/CURLOPT_NOSIGNAL.html
        try set(CURLOPT_NOSIGNAL, 1, operation)
        try set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.connectTimeout), operation)
        try set(CURLOPT_TIMEOUT_MS, Self.milliseconds(configuration.totalTimeout), operation)
        // Verification is libcurl's default too; set explicitly so that no
        // default elsewhere can change it. There is no option to turn it off.
        try set(CURLOPT_SSL_VERIFYPEER, 1, operation)
        try set(CURLOPT_SSL_VERIFYHOST, 2, operation)
        if let file = configuration.certificateAuthorityFile {
            try set(CURLOPT_CAINFO, string: file, operation)
            // Debian's libcurl also trusts the directory /etc/ssl/certs by
            // default; clearing it leaves the configured file as the only
            // trust, as `certificateAuthorityFile` promises.
            try check(ccurl_setopt_string(handle, CURLOPT_CAPATH, nil), operation)
        }
        try set(CURLOPT_USERAGENT, string: configuration.userAgent, operation)
        // Probes an idle kept-alive connection, so a dead one is noticed.
        try set(CURLOPT_TCP_KEEPALIVE, 1, operation)
        // libcurl resends a request on a fresh connection when a reused one
        // dies before any answer, which for a committed write would make a
        // second record; a write asks for a new connection, so a lost answer
        // reaches the caller instead (`HTTPRequest.freshConnection`).
        try set(CURLOPT_FRESH_CONNECT, request.freshConnection ? 1 : 0, operation)
    }

    /// The request's headers as libcurl's list, with the body's content type
    /// and an empty `Expect:`, which stops libcurl from waiting up to a second
    /// for a `100 Continue` before sending a large body.
    private func makeHeaderList(_ request: HTTPRequest, _ operation: String) throws(TransportError)
        -> UnsafeMutablePointer<curl_slist>?
    {
        var lines = request.headers.fields.map { field in
            // "Name:" alone would remove a header; "Name;" sends it empty.
            field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
        }
        if !request.headers.contains("Content-Type") {
            switch request.body {
            case .bytes(_, let contentType): lines.append("Content-Type: \(contentType)")
            // libcurl would label an empty POST as a form
            // (application/x-www-form-urlencoded); "Name:" removes that.
            case .empty: lines.append("Content-Type:")
            case .multipart: break
            }
        }
        lines.append("Expect:")
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let longer = ccurl_slist_append(list, line) else {
                ccurl_slist_free_all(list)
                throw .other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "\(operation): building the header list")
            }
            list = longer
        }
        return list
    }

    /// Sets the method and the body; returns the multipart form to free
    /// after the transfer, if one was made.
    private func setMethodAndBody(_ request: HTTPRequest, _ operation: String) throws(TransportError)
        -> OpaquePointer?
    {
        var form: OpaquePointer?
        switch request.body {
        case .empty where request.method == .get:
            try set(CURLOPT_HTTPGET, 1, operation)
            return nil
        case .empty where request.method == .head:
            try set(CURLOPT_NOBODY, 1, operation)
            return nil
        case .empty where [.post, .put, .patch].contains(request.method):
            // Sends `Content-Length: 0`, which servers expect on these methods.
            try setPostFields([], operation)
        case .empty:
            break
        case .bytes(let bytes, _):
            try setPostFields(bytes, operation)
        case .multipart(let parts):
            form = try makeForm(parts, operation)
            do throws(TransportError) {
                try check(ccurl_setopt_mime(handle, CURLOPT_MIMEPOST, form), operation, url: request.url)
            } catch {
                ccurl_mime_free(form)
                throw error
            }
        }
        if request.method != .post {
            try set(CURLOPT_CUSTOMREQUEST, string: request.method.rawValue, operation)
        }
        if request.method == .head {
            // Without it, libcurl would wait for a body a HEAD never gets.
            try set(CURLOPT_NOBODY, 1, operation)
        }
        return form
    }

    /// A body libcurl copies, so Swift's array need not outlive this call.
    /// The size goes first, so bytes are not read up to a NUL; libcurl reads
    /// a NULL body as "ask the read callback", which by default reads stdin,
    /// so an empty body still points at a real byte.
    /// https://curl.se/libcurl/c/CURLOPT_COPYPOSTFIELDS.html
    private func setPostFields(_ bytes: [UInt8], _ operation: String) throws(TransportError) {
        try check(ccurl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)), operation)
        let stored = bytes.isEmpty ? [0] : bytes
        let code = stored.withUnsafeBytes { raw in
            ccurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
        }
        try check(code, operation)
    }

    /// A multipart form; libcurl copies every name and byte into it.
    private func makeForm(_ parts: [MultipartPart], _ operation: String) throws(TransportError) -> OpaquePointer {
        guard let form = ccurl_mime_init(handle) else {
            throw .other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "\(operation): creating the form")
        }
        do throws(TransportError) {
            for part in parts {
                guard let mimePart = ccurl_mime_addpart(form) else {
                    throw TransportError.other(
                        code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "\(operation): adding a form part")
                }
                try check(ccurl_mime_name(mimePart, part.name), operation)
                if let filename = part.filename {
                    try check(ccurl_mime_filename(mimePart, filename), operation)
                }
                if let contentType = part.contentType {
                    try check(ccurl_mime_type(mimePart, contentType), operation)
                }
                let stored = part.data.isEmpty ? [0] : part.data
                let code = stored.withUnsafeBytes { raw in
                    ccurl_mime_data(mimePart, raw.baseAddress?.assumingMemoryBound(to: CChar.self), part.data.count)
                }
                try check(code, operation)
            }
        } catch {
            ccurl_mime_free(form)
            throw error
        }
        return form
    }

    /// Points libcurl's body, header and progress callbacks at `context`, a
    /// `ResponseCollector`. The closures capture nothing, so they convert to
    /// C function pointers. Returning fewer bytes than given aborts the
    /// transfer (an answer past its limit), and so does a non-zero answer
    /// of the progress callback (a stop request), which libcurl calls at
    /// least about once a second even while nothing arrives.
    private func setCallbacks(context: UnsafeMutableRawPointer, _ operation: String) throws(TransportError) {
        try check(
            ccurl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
                ResponseCollector.written(buffer, size * count, context, to: ResponseCollector.receiveBody)
            }, operation)
        try set(CURLOPT_WRITEDATA, pointer: context, operation)
        try check(
            ccurl_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION) { buffer, size, count, context in
                ResponseCollector.written(buffer, size * count, context, to: ResponseCollector.receiveHeader)
            }, operation)
        try set(CURLOPT_HEADERDATA, pointer: context, operation)
        try check(
            ccurl_setopt_xferinfo_callback(handle, CURLOPT_XFERINFOFUNCTION) { context, _, _, _, _ in
                ResponseCollector.calledBack(context).keepGoing() ? 0 : 1
            }, operation)
        try set(CURLOPT_XFERINFODATA, pointer: context, operation)
        // The progress callback is called only with the progress meter on.
        try set(CURLOPT_NOPROGRESS, 0, operation)
    }

    // MARK: - Typed options and information

    private func set(_ option: CURLoption, _ value: Int, _ operation: String) throws(TransportError) {
        try check(ccurl_setopt_long(handle, option, value), operation)
    }

    private func set(_ option: CURLoption, string value: String, _ operation: String) throws(TransportError) {
        // libcurl copies string options, so Swift's temporary C string is enough.
        try check(ccurl_setopt_string(handle, option, value), operation)
    }

    private func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?, _ operation: String)
        throws(TransportError)
    {
        try check(ccurl_setopt_pointer(handle, option, value), operation)
    }

    private func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?, _ operation: String)
        throws(TransportError)
    {
        try check(ccurl_setopt_slist(handle, option, value), operation)
    }

    private func info(_ item: CURLINFO, _ operation: String) throws(TransportError) -> Int {
        var value = 0
        try check(ccurl_getinfo_long(handle, item, &value), operation)
        return value
    }

    /// A string libcurl owns until the next transfer, copied out at once.
    private func stringInfo(_ item: CURLINFO, _ operation: String) throws(TransportError) -> String? {
        var value: UnsafePointer<CChar>?
        try check(ccurl_getinfo_string(handle, item, &value), operation)
        return value.map { String(cString: $0) }
    }

    // MARK: - Every return code, in one place

    /// Throws the `TransportError` for any result but CURLE_OK, with the
    /// message libcurl wrote into the error buffer (or its generic text).
    private func check(_ code: CURLcode, _ operation: String, url: String = "") throws(TransportError) {
        guard code != CURLE_OK else { return }
        var message = String(cString: errorBuffer)
        while let last = message.unicodeScalars.last, last == "\n" || last == "\r" {
            message.unicodeScalars.removeLast()
        }
        if message.isEmpty { message = String(cString: ccurl_easy_strerror(code)) }
        throw TransportError(curlCode: code, message: message, operation: operation, url: url)
    }

    /// Whole milliseconds, at least one: zero would mean "no timeout" to
    /// libcurl, and a request must never wait forever.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return seconds > 0 ? Int.max : 1 }
        return max(1, Int(clamping: total.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
