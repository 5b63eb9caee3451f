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
    ///
    /// libcurl is opened here, at the first transfer, not linked (see
    /// ccurl.h): a machine without it fails this one call with a message
    /// naming the library and the package that holds it.
    private static let initialization: Result<CURLcode, TransportError> = {
        if let reason = ccurl_load() {
            return .failure(
                .other(
                    code: Int(CURLE_FAILED_INIT.rawValue),
                    message: "loading libcurl (\(CCURL_LIBRARY)): \(String(cString: reason)); install the Debian "
                        + "package libcurl4 (apt-get install libcurl4), which jqc's package depends on"))
        }
        return .success(ccurl_global_init(Int(CURL_GLOBAL_DEFAULT)))
    }()

    static func initialize() throws(TransportError) {
        let code = try initialization.get()
        if code != CURLE_OK {
            throw .other(
                code: Int(code.rawValue),
                message: "initialising libcurl (curl_global_init): \(String(cString: ccurl_easy_strerror(code)))")
        }
    }
}
