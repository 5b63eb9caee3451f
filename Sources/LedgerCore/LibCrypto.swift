import CCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The libcrypto functions this module calls, found in the library opened
/// with `dlopen` at the first use (a hash, a signature, random bytes, base64).
///
/// libcrypto is not linked: loading it at start bound about 3,400 of its
/// symbols and ran its constructors in every process, about 2.5 million
/// instructions of the dynamic loader's, a third of `jqc --version`'s, for
/// the commands that never hash (help, completion, `config`). Each pointer
/// has its C declaration's own type (`ccrypto_*` in CCrypto's header).
///
/// Shared by every thread: the table is made once, under the Swift runtime's
/// lock for a static `let`, and never changed, and C function pointers
/// capture nothing, so the compiler checks it is `Sendable`; libcrypto's
/// functions are thread-safe on separate contexts, which each caller keeps.
struct LibCrypto: Sendable {
    let mdFetch: ccrypto_EVP_MD_fetch
    let mdContextNew: ccrypto_EVP_MD_CTX_new
    let mdContextFree: ccrypto_EVP_MD_CTX_free
    let digestInit: ccrypto_EVP_DigestInit_ex2
    let digestUpdate: ccrypto_EVP_DigestUpdate
    let digestFinal: ccrypto_EVP_DigestFinal_ex
    let decodeBlock: ccrypto_EVP_DecodeBlock
    let randomBytes: ccrypto_RAND_bytes
    let keyFree: ccrypto_EVP_PKEY_free
    let newPrivateKey: ccrypto_EVP_PKEY_new_raw_private_key
    let newPublicKey: ccrypto_EVP_PKEY_new_raw_public_key
    let rawPublicKey: ccrypto_EVP_PKEY_get_raw_public_key
    let signInit: ccrypto_EVP_DigestSignInit
    let sign: ccrypto_EVP_DigestSign
    let verifyInit: ccrypto_EVP_DigestVerifyInit
    let verify: ccrypto_EVP_DigestVerify
    /// SHA-256's own functions, which need none of OpenSSL's set-up: the
    /// first `EVP_MD_fetch` of a process loads the configuration file and
    /// the default provider and fills the name tables (measured: 1.2 ms of
    /// CPU, as long as loading the library). Deprecated in OpenSSL 3.0, so
    /// looked up as optional: without them a hasher fetches.
    let sha256: SHA256Functions?

    /// `SHA256_Init`, `SHA256_Update` and `SHA256_Final`.
    struct SHA256Functions {
        let initialise: ccrypto_SHA256_Init
        let update: ccrypto_SHA256_Update
        let finish: ccrypto_SHA256_Final
    }

    /// The table, loaded by the first caller.
    static let functions = LibCrypto(library: open())

    private init(library: UnsafeMutableRawPointer) {
        mdFetch = Self.find("EVP_MD_fetch", in: library)
        mdContextNew = Self.find("EVP_MD_CTX_new", in: library)
        mdContextFree = Self.find("EVP_MD_CTX_free", in: library)
        digestInit = Self.find("EVP_DigestInit_ex2", in: library)
        digestUpdate = Self.find("EVP_DigestUpdate", in: library)
        digestFinal = Self.find("EVP_DigestFinal_ex", in: library)
        decodeBlock = Self.find("EVP_DecodeBlock", in: library)
        randomBytes = Self.find("RAND_bytes", in: library)
        keyFree = Self.find("EVP_PKEY_free", in: library)
        newPrivateKey = Self.find("EVP_PKEY_new_raw_private_key", in: library)
        newPublicKey = Self.find("EVP_PKEY_new_raw_public_key", in: library)
        rawPublicKey = Self.find("EVP_PKEY_get_raw_public_key", in: library)
        signInit = Self.find("EVP_DigestSignInit", in: library)
        sign = Self.find("EVP_DigestSign", in: library)
        verifyInit = Self.find("EVP_DigestVerifyInit", in: library)
        verify = Self.find("EVP_DigestVerify", in: library)
        sha256 = Self.sha256(in: library)
    }

    /// The three SHA-256 functions when the library has all three.
    private static func sha256(in library: UnsafeMutableRawPointer) -> SHA256Functions? {
        guard let initialise: ccrypto_SHA256_Init = look(up: "SHA256_Init", in: library),
            let update: ccrypto_SHA256_Update = look(up: "SHA256_Update", in: library),
            let finish: ccrypto_SHA256_Final = look(up: "SHA256_Final", in: library)
        else { return nil }
        return SHA256Functions(initialise: initialise, update: update, finish: finish)
    }

    /// libcrypto, opened for the life of the process (never closed).
    private static func open() -> UnsafeMutableRawPointer {
        guard let library = dlopen(CCRYPTO_LIBRARY, RTLD_NOW | RTLD_LOCAL) else {
            unavailable(dlerror().map { String(cString: $0) } ?? "dlopen failed")
        }
        return library
    }

    /// The function `name` of libcrypto, as the type its declaration has.
    private static func find<Function>(_ name: String, in library: UnsafeMutableRawPointer) -> Function {
        guard let function: Function = look(up: name, in: library) else {
            unavailable("it has no function \(name) (an OpenSSL older than 3.0?)")
        }
        return function
    }

    /// The function `name` of libcrypto as its declaration's type, nil when
    /// the library has none.
    private static func look<Function>(up name: String, in library: UnsafeMutableRawPointer) -> Function? {
        dlsym(library, name).map { unsafeBitCast($0, to: Function.self) }
    }

    /// Ends the process as the dynamic loader did when libcrypto was linked
    /// and missing (status 127), but saying what to install: nothing hashes,
    /// signs or verifies without it, and no caller could go on.
    private static func unavailable(_ reason: String) -> Never {
        let text =
            "cannot use libcrypto (\(CCRYPTO_LIBRARY)): \(reason); install the Debian package libssl3 "
            + "(apt-get install libssl3), which jqc's package depends on\n"
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(127)
    }
}
