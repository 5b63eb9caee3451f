import CCrypto

/// Why a key or signature operation failed.
public enum SignatureError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key of the wrong length or rejected by libcrypto.
    case invalidKey(String)
    /// libcrypto failed (out of memory, or Ed25519 unavailable).
    case cryptoFailure(String)

    public var description: String {
        switch self {
        case .invalidKey(let why): "not a usable Ed25519 key: \(why)"
        case .cryptoFailure(let operation): "libcrypto's \(operation) failed; the OpenSSL installation lacks Ed25519"
        }
    }
}

/// Ed25519 (RFC 8032) through libcrypto's EVP interface.
public enum Ed25519 {
    /// 32 random bytes from libcrypto's generator: a new private key (seed).
    public static func newSeed() throws(SignatureError) -> [UInt8] {
        var seed = [UInt8](repeating: 0, count: 32)
        let rc = seed.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, 32) }
        guard rc == 1 else { throw .cryptoFailure("RAND_bytes") }
        return seed
    }

    /// The public key (32 bytes) of a private key's seed.
    public static func publicKey(seed: [UInt8]) throws(SignatureError) -> [UInt8] {
        let key = try privateKey(seed)
        defer { EVP_PKEY_free(key) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        let rc = out.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(key, $0.baseAddress, &length) }
        guard rc == 1, length == 32 else { throw .cryptoFailure("EVP_PKEY_get_raw_public_key") }
        return out
    }

    /// The 64-byte signature of `message`.
    public static func sign(_ message: [UInt8], seed: [UInt8]) throws(SignatureError) -> [UInt8] {
        let key = try privateKey(seed)
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw .cryptoFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else { throw .cryptoFailure("EVP_DigestSignInit") }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let rc = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { input in
                EVP_DigestSign(context, out.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard rc == 1, length == 64 else { throw .cryptoFailure("EVP_DigestSign") }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    public static func verify(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        let key = publicKey.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
        }
        guard let key else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        let rc = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { input in
                EVP_DigestVerify(context, sig.baseAddress, 64, input.baseAddress, input.count)
            }
        }
        return rc == 1
    }

    private static func privateKey(_ seed: [UInt8]) throws(SignatureError) -> OpaquePointer {
        guard seed.count == 32 else { throw .invalidKey("a private key is 32 bytes, not \(seed.count)") }
        let key = seed.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
        }
        guard let key else { throw .invalidKey("libcrypto rejected the private key") }
        return key
    }
}
