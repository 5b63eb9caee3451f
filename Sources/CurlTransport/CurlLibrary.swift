import CCurl
import HTTPCore

/// libcurl's process-wide state.
enum CurlLibrary {
    /// `curl_global_init` must run once per process before any handle is
    /// made, and is only safe to call from two threads at once in builds
    /// that report `CURL_VERSION_THREADSAFE`. A static `let` is initialised
    /// exactly once, under the Swift runtime's own lock, so every thread
    /// sees the one result. It is never paired with `curl_global_cleanup`:
    /// the state lives as long as the process.
    /// https://curl.se/libcurl/c/curl_global_init.html
    private static let initialization = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    static func initialize() throws(TransportError) {
        let code = initialization
        if code != CURLE_OK {
            throw .other(
                code: Int(code.rawValue),
                message: "initialising libcurl (curl_global_init): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}
