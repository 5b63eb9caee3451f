import FoundationEssentials

/// A witness's Ed25519 cosigner key (C2SP `tlog-cosignature`, signature type
/// 0x04), as its operator publishes it (a C2SP `signed-note` verifier key):
///
///     key id       = SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[0..<4]
///     verifier key = <name>+<key id, 8 hex digits>+<base64(0x04 ‖ public key)>
public struct CosignerKey: Sendable, Equatable, Hashable {
    /// The witness's name (its key name), e.g. `witness.example/w1`.
    public let name: String
    public let publicKey: [UInt8]

    /// The signature type byte of an Ed25519 cosignature/v1.
    public static let cosignatureV1: UInt8 = 0x04

    public init(name: String, publicKey: [UInt8]) throws(SignatureError) {
        guard NoteKey.isValidName(name) else { throw .invalidKey("the name \"\(name)\" has a space or a '+'") }
        guard publicKey.count == 32 else { throw .invalidKey("an Ed25519 public key is 32 bytes") }
        self.name = name
        self.publicKey = publicKey
    }

    /// Parses a cosigner verifier key, refusing one whose key id is not the
    /// one its name and key give (a key mistyped or meant for another name).
    public init(parsing text: String) throws(SignatureError) {
        let trimmed = String(text.trimmingWhitespace())
        // Base64 may itself hold '+': split off the fixed fields only.
        let parts = trimmed.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let id = Hex.decode(parts[1]), id.count == 4,
            let key = Data(base64Encoded: parts[2]).map(Array.init), key.count == 33
        else {
            throw .invalidKey("expected <name>+<8 hex digits>+<base64 of 0x04 and 32 key bytes>")
        }
        guard key[0] == Self.cosignatureV1 else {
            throw .invalidKey(
                "its signature type is 0x\(Hex.encode([key[0]])), not 0x04 (an Ed25519 cosignature/v1 key)"
                    + (key[0] == NoteKey.ed25519 ? ": it is a log's note key, not a witness's cosigner key" : ""))
        }
        let parsed = try CosignerKey(name: parts[0], publicKey: Array(key[1...]))
        guard parsed.keyID == id else {
            throw .invalidKey(
                "its key id \(parts[1]) does not match the key (it should be \(Hex.encode(parsed.keyID)))")
        }
        self = parsed
    }

    /// The 4-byte key id.
    public var keyID: [UInt8] {
        let hash = SHA256Hasher().digest(Array(name.utf8), [0x0A, Self.cosignatureV1], publicKey)
        return Array(hash.bytes[0..<4])
    }

    /// `<name>+<hex key id>+<base64(0x04 ‖ public key)>`.
    public var verifierKey: String {
        "\(name)+\(Hex.encode(keyID))+\(Data([Self.cosignatureV1] + publicKey).base64EncodedString())"
    }
}

/// One cosignature/v1 (C2SP `tlog-cosignature`): a witness's statement that,
/// at `timestamp`, the checkpoint is the largest consistent one it has seen
/// of the log. Its note signature line is
///
///     — <witness name> <base64(key id (4) ‖ timestamp (u64, big-endian) ‖ Ed25519 signature (64))>
///
/// and the signature is over `cosignature/v1\ntime <timestamp>\n` followed by
/// the checkpoint's note body (with its final newline, without signatures).
public struct Cosignature: Sendable, Equatable {
    public var name: String
    public var keyID: [UInt8]
    /// POSIX seconds.
    public var timestamp: UInt64
    public var signature: [UInt8]

    public init(name: String, keyID: [UInt8], timestamp: UInt64, signature: [UInt8]) {
        self.name = name
        self.keyID = keyID
        self.timestamp = timestamp
        self.signature = signature
    }

    /// The signature line, with its final newline.
    public var line: String {
        var blob = keyID
        for shift in stride(from: 56, through: 0, by: -8) { blob.append(UInt8(truncatingIfNeeded: timestamp >> shift)) }
        return "\u{2014} \(name) \(Data(blob + signature).base64EncodedString())\n"
    }

    /// The message a cosigner signs over a checkpoint whose note body is `body`.
    public static func message(body: String, timestamp: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(timestamp)\n".utf8) + Array(body.utf8)
    }

    /// The cosignature on a note signature line (without its newline) that
    /// is by `key` (its name and key id), nil for a line by another key
    /// (ignored, as the spec says); throws for a line by `key` that is not a
    /// well-formed cosignature/v1.
    public static func by(_ key: CosignerKey, line: Substring) throws(NoteError) -> Cosignature? {
        guard line.hasPrefix("\u{2014} ") else {
            throw .malformed("a signature line does not start with \"— \"")
        }
        let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 2, let blob = Data(base64Encoded: String(fields[1])).map(Array.init), blob.count >= 4
        else { throw .malformed("a signature line is not \"— <name> <base64>\"") }
        guard fields[0] == key.name, Array(blob[0..<4]) == key.keyID else { return nil }
        guard blob.count == 4 + 8 + 64 else {
            throw .malformed("the cosignature by \(key.name) is \(blob.count) bytes, not 76")
        }
        let timestamp = blob[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard timestamp <= UInt64(Int64.max) else { throw .malformed("the cosignature's timestamp exceeds 2^63-1") }
        return Cosignature(name: key.name, keyID: key.keyID, timestamp: timestamp, signature: Array(blob[12...]))
    }

    /// Whether it is `key`'s valid signature over the checkpoint `body`.
    public func verifies(body: String, key: CosignerKey) -> Bool {
        name == key.name && keyID == key.keyID
            && Ed25519.verify(
                signature: signature, of: Self.message(body: body, timestamp: timestamp), publicKey: key.publicKey)
    }

    /// Every cosignature by `key` in `lines` (a witness's answer, or the
    /// signature lines of a note) that verifies over `body`; throws when a
    /// line by `key` does not verify (a witness answering with a bad
    /// cosignature is never believed, nor silently passed over).
    public static func verified(lines: String, body: String, key: CosignerKey) throws(NoteError) -> [Cosignature] {
        var found: [Cosignature] = []
        for line in lines.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let cosignature = try by(key, line: line) else { continue }
            guard cosignature.verifies(body: body, key: key) else {
                throw .unverified(
                    "the cosignature by \(key.name)+\(Hex.encode(key.keyID)) does not verify over this checkpoint")
            }
            found.append(cosignature)
        }
        return found
    }
}
