import HTTPCore

/// Gathers one transfer's response from libcurl's callbacks.
///
/// libcurl calls back with a `void *` it was given; that pointer is this
/// object, unretained, kept alive by `EasyHandle.perform` for exactly the
/// duration of `curl_easy_perform`.
final class ResponseCollector {
    /// The collector behind the `void *` a callback was given: the one
    /// `EasyHandle.setCallbacks` set beside each callback, so never nil.
    static func calledBack(_ context: UnsafeMutableRawPointer?) -> ResponseCollector {
        guard let context else { preconditionFailure("libcurl called back without the data pointer set with it") }
        return Unmanaged<ResponseCollector>.fromOpaque(context).takeUnretainedValue()
    }

    /// A write callback's answer: the `count` bytes at `buffer` handed to
    /// `receive` of the collector behind `context`, all of them taken, or 0
    /// (which makes libcurl give the transfer up) when `receive` refuses them.
    static func written(
        _ buffer: UnsafeMutablePointer<CChar>?, _ count: Int, _ context: UnsafeMutableRawPointer?,
        to receive: (ResponseCollector) -> (UnsafeRawBufferPointer) -> Bool
    ) -> Int {
        receive(calledBack(context))(UnsafeRawBufferPointer(start: buffer, count: count)) ? count : 0
    }

    private(set) var body: [UInt8] = []
    private(set) var headers = HTTPHeaders()
    /// The most bytes of body kept; one more and the transfer is given up.
    let bodyLimit: Int
    /// Polled by libcurl's progress callback; raised, the transfer ends.
    let stop: StopRequest?
    /// Why the collector made libcurl give up, if it did.
    private(set) var refusal: Refusal?
    /// Header bytes received, every interim response included.
    private(set) var headerBytes = 0

    enum Refusal: Equatable {
        /// The body (or its announced `Content-Length`) passed `bodyLimit`.
        case tooLarge
        /// The stop request was raised, for this reason.
        case stopped(String)
    }

    /// Far above any real header block, and bounded: libcurl limits each
    /// header line, not how many lines a server sends.
    static let headerLimit = 256 << 10

    init(bodyLimit: Int, stop: StopRequest?) {
        self.bodyLimit = max(0, bodyLimit)
        self.stop = stop
    }

    /// Called with each piece of the body, as it arrives; answers false
    /// (so the transfer is given up) once the body would pass the limit:
    /// nothing past the limit is ever held.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= bodyLimit - body.count else {
            refusal = .tooLarge
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Called by libcurl's progress callback, at least about once a second:
    /// answers false once the transfer must stop.
    func keepGoing() -> Bool {
        guard let reason = stop?.reason else { return true }
        refusal = .stopped(reason)
        return false
    }

    /// `receiveHeaderLine`, refusing (false) an announced body longer than
    /// the limit before any of it arrives, and a header block without end.
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= Self.headerLimit else {
            refusal = .tooLarge
            return false
        }
        receiveHeaderLine(bytes)
        if let announced = headers["Content-Length"], let length = Int(announced), length > bodyLimit {
            refusal = .tooLarge
            return false
        }
        return true
    }

    /// Called with one complete header line at a time, status lines and the
    /// empty line that ends a header block included.
    /// https://curl.se/libcurl/c/CURLOPT_HEADERFUNCTION.html
    private func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var line = String(decoding: bytes, as: UTF8.self)
        // By scalars: "\r\n" is a single Character, so `line.last` never equals "\n".
        while let last = line.unicodeScalars.last, last == "\n" || last == "\r" { line.unicodeScalars.removeLast() }
        if line.hasPrefix("HTTP/") {
            // A new status line starts a new response (after a `100 Continue`
            // or another interim one): only the final response's headers count.
            headers = HTTPHeaders()
            return
        }
        if line.isEmpty { return }
        if line.first == " " || line.first == "\t", let last = headers.fields.last {
            // An obsolete folded line continues the previous field's value.
            var fields = headers.fields
            fields[fields.count - 1].value = last.value + " " + line.trimmingBlanks()
            headers = HTTPHeaders(fields)
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        headers.append(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingBlanks())
    }
}

extension String {
    /// Without the spaces and tabs HTTP allows around a field value.
    fileprivate func trimmingBlanks() -> String {
        let blanks: Set<Character> = [" ", "\t"]
        guard let first = firstIndex(where: { !blanks.contains($0) }) else { return "" }
        // The character at `first` is not a blank, so a last one is found.
        let last = lastIndex(where: { !blanks.contains($0) }) ?? first
        return String(self[first...last])
    }
}
