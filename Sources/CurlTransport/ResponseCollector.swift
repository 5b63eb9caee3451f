import HTTPCore

/// Gathers one transfer's response from libcurl's callbacks.
///
/// libcurl calls back with a `void *` it was given; that pointer is this
/// object, unretained, kept alive by `EasyHandle.perform` for exactly the
/// duration of `curl_easy_perform`.
final class ResponseCollector {
    private(set) var body: [UInt8] = []
    private(set) var headers = HTTPHeaders()

    /// Called with each piece of the body, as it arrives.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) {
        body.append(contentsOf: bytes)
    }

    /// Called with one complete header line at a time, status lines and the
    /// empty line that ends a header block included.
    /// https://curl.se/libcurl/c/CURLOPT_HEADERFUNCTION.html
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
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
        let last = lastIndex(where: { !blanks.contains($0) })!
        return String(self[first...last])
    }
}
