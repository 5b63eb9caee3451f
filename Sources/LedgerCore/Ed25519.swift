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
        let rc = seed.withUnsafeMutableBufferPointer { LibCrypto.functions.randomBytes($0.baseAddress, 32) }
        guard rc == 1 else { throw .cryptoFailure("RAND_bytes") }
        return seed
    }

    /// The public key (32 bytes) of a private key's seed.
    public static func publicKey(seed: [UInt8]) throws(SignatureError) -> [UInt8] {
        let crypto = LibCrypto.functions
        let key = try privateKey(seed)
        defer { crypto.keyFree(key) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        let rc = out.withUnsafeMutableBufferPointer { crypto.rawPublicKey(key, $0.baseAddress, &length) }
        guard rc == 1, length == 32 else { throw .cryptoFailure("EVP_PKEY_get_raw_public_key") }
        return out
    }

    /// The 64-byte signature of `message`.
    public static func sign(_ message: [UInt8], seed: [UInt8]) throws(SignatureError) -> [UInt8] {
        let crypto = LibCrypto.functions
        let key = try privateKey(seed)
        defer { crypto.keyFree(key) }
        guard let context = crypto.mdContextNew() else { throw .cryptoFailure("EVP_MD_CTX_new") }
        defer { crypto.mdContextFree(context) }
        guard crypto.signInit(context, nil, nil, nil, key) == 1 else { throw .cryptoFailure("EVP_DigestSignInit") }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let rc = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { input in
                crypto.sign(context, out.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard rc == 1, length == 64 else { throw .cryptoFailure("EVP_DigestSign") }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    public static func verify(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        let crypto = LibCrypto.functions
        let key = publicKey.withUnsafeBufferPointer {
            crypto.newPublicKey(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
        }
        guard let key else { return false }
        defer { crypto.keyFree(key) }
        guard let context = crypto.mdContextNew() else { return false }
        defer { crypto.mdContextFree(context) }
        guard crypto.verifyInit(context, nil, nil, nil, key) == 1 else { return false }
        let rc = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { input in
                crypto.verify(context, sig.baseAddress, 64, input.baseAddress, input.count)
            }
        }
        return rc == 1
    }

    private static func privateKey(_ seed: [UInt8]) throws(SignatureError) -> OpaquePointer {
        guard seed.count == 32 else { throw .invalidKey("a private key is 32 bytes, not \(seed.count)") }
        let key = seed.withUnsafeBufferPointer {
            LibCrypto.functions.newPrivateKey(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
        }
        guard let key else { throw .invalidKey("libcrypto rejected the private key") }
        return key
    }
}
