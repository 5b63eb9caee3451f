import FoundationEssentials

/// A device's Ed25519 key in the C2SP `signed-note` encodings (the same as Go's
/// `golang.org/x/mod/sumdb/note`):
///
///     key id       = SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key)[0..<4]
///     verifier key = <name>+<key id, 8 hex digits>+<base64(0x01 ‖ public key)>
///     signer key   = PRIVATE+KEY+<name>+<key id, 8 hex digits>+<base64(0x01 ‖ seed)>
public struct NoteKey: Sendable, Equatable {
    /// The key's name, e.g. `jqc/<device id>`: no spaces, no `+`.
    public let name: String
    public let publicKey: [UInt8]
    /// The private seed; nil for a verifier key.
    public let seed: [UInt8]?

    /// The signature algorithm byte of Ed25519 in signed notes.
    public static let ed25519: UInt8 = 0x01

    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.unicodeScalars.contains { $0 == "+" || $0.properties.isWhitespace || $0.value < 0x20 }
    }

    /// A new key of that name.
    public static func generate(name: String) throws(SignatureError) -> NoteKey {
        let seed = try Ed25519.newSeed()
        return try NoteKey(name: name, seed: seed)
    }

    public init(name: String, seed: [UInt8]) throws(SignatureError) {
        guard Self.isValidName(name) else { throw .invalidKey("the name \"\(name)\" has a space or a '+'") }
        self.name = name
        self.seed = seed
        self.publicKey = try Ed25519.publicKey(seed: seed)
    }

    public init(name: String, publicKey: [UInt8]) throws(SignatureError) {
        guard Self.isValidName(name) else { throw .invalidKey("the name \"\(name)\" has a space or a '+'") }
        guard publicKey.count == 32 else { throw .invalidKey("an Ed25519 public key is 32 bytes") }
        self.name = name
        self.publicKey = publicKey
        self.seed = nil
    }

    /// The 4-byte key id.
    public var keyID: [UInt8] {
        let hash = SHA256Hasher().digest(Array(name.utf8), [0x0A, Self.ed25519], publicKey)
        return Array(hash.bytes[0..<4])
    }

    /// `<name>+<hex key id>+<base64(0x01 ‖ public key)>`.
    public var verifierKey: String {
        "\(name)+\(Hex.encode(keyID))+\(Data([Self.ed25519] + publicKey).base64EncodedString())"
    }

    /// `PRIVATE+KEY+<name>+<hex key id>+<base64(0x01 ‖ seed)>`; nil for a verifier key.
    public var signerKey: String? {
        seed.map { "PRIVATE+KEY+\(name)+\(Hex.encode(keyID))+\(Data([Self.ed25519] + $0).base64EncodedString())" }
    }

    /// Parses a verifier key or a signer key.
    public init(parsing text: String) throws(SignatureError) {
        // Base64 may itself hold '+': split off the fixed fields only.
        let trimmed = String(text.trimmingWhitespace())
        var isPrivate = false
        var parts: [String]
        if trimmed.hasPrefix("PRIVATE+KEY+") {
            isPrivate = true
            parts = trimmed.dropFirst(12).split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false).map(
                String.init)
        } else {
            parts = trimmed.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        }
        guard parts.count == 3, let id = Hex.decode(parts[1]), id.count == 4,
            let key = Data(base64Encoded: parts[2]).map(Array.init), key.count == 33, key[0] == Self.ed25519
        else { throw .invalidKey("expected <name>+<8 hex digits>+<base64 of 0x01 and 32 key bytes>") }
        let parsed =
            isPrivate
            ? try NoteKey(name: parts[0], seed: Array(key[1...]))
            : try NoteKey(name: parts[0], publicKey: Array(key[1...]))
        guard parsed.keyID == id else { throw .invalidKey("its key id \(parts[1]) does not match the key") }
        self = parsed
    }

    /// The signature line of `text` (C2SP signed-note): `— <name> <base64(key id ‖ signature)>`.
    public func signatureLine(for text: String) throws(SignatureError) -> String {
        guard let seed else { throw .invalidKey("a verifier key cannot sign") }
        let signature = try Ed25519.sign(Array(text.utf8), seed: seed)
        return "\u{2014} \(name) \(Data(keyID + signature).base64EncodedString())\n"
    }
}

/// Why a signed note or checkpoint was refused.
public enum NoteError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    /// No signature by the expected key, or one that does not verify.
    case unverified(String)

    public var description: String {
        switch self {
        case .malformed(let why): "not a signed checkpoint: \(why)"
        case .unverified(let why): "the checkpoint's signature does not verify: \(why)"
        }
    }
}

/// A C2SP `tlog-checkpoint`: the origin, the tree size and the root hash, as
/// the text of a signed note.
///
///     <origin>\n<size, decimal>\n<base64 root hash>\n
///     \n
///     — <key name> <base64(key id ‖ Ed25519 signature of the text above the blank line)>\n
public struct Checkpoint: Sendable, Equatable {
    public var origin: String
    public var size: UInt64
    public var root: Digest256
    /// The root of the map of stream heads at `size` (`HeadMap`), carried in
    /// the extension line `jqc-heads <base64>`; nil in a checkpoint without
    /// it (older ledgers and files: not provable complete).
    public var heads: Digest256?
    /// Every extension line as read (after the root line), signed with the rest.
    public var extensions: [String]

    /// The extension line's keyword.
    public static let headsKeyword = "jqc-heads"

    public init(origin: String, size: UInt64, root: Digest256, heads: Digest256? = nil) {
        self.origin = origin
        self.size = size
        self.root = root
        self.heads = heads
        self.extensions = heads.map { ["\(Self.headsKeyword) \(Data($0.bytes).base64EncodedString())"] } ?? []
    }

    /// The note's text (what is signed): origin, size, root, extension lines.
    public var text: String {
        "\(origin)\n\(size)\n\(Data(root.bytes).base64EncodedString())\n" + extensions.map { $0 + "\n" }.joined()
    }

    /// The map root of the extension lines: nil when none is `jqc-heads`;
    /// two such lines, or one that is not 32 bytes of base64, are malformed.
    static func headsRoot(_ lines: [Substring]) throws(NoteError) -> Digest256? {
        var found: Digest256?
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.first == Substring(headsKeyword) else { continue }
            guard found == nil else { throw .malformed("two \(headsKeyword) lines") }
            guard fields.count == 2, let bytes = Data(base64Encoded: String(fields[1])).map(Array.init),
                let root = Digest256(bytes: bytes)
            else { throw .malformed("the \(headsKeyword) line is not \"\(headsKeyword) <base64 of 32 bytes>\"") }
            found = root
        }
        return found
    }

    /// The signed note.
    public func signed(by key: NoteKey) throws(SignatureError) -> String {
        text + "\n" + (try key.signatureLine(for: text))
    }

    /// Parses a signed checkpoint and checks that `key` signed it and that its
    /// origin line is the key's name.
    public init(verifying note: String, key: NoteKey) throws(NoteError) {
        guard let split = note.utf8.firstRange(of: "\n\n".utf8) else {
            throw .malformed("no blank line before the signatures")
        }
        let text = String(note[..<split.upperBound].dropLast())
        let signatures = note[split.upperBound...]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 4, lines.last == "" else {
            throw .malformed("expected an origin line, a size line and a root hash line")
        }
        guard !lines[0].isEmpty else { throw .malformed("the origin line is empty") }
        guard let size = UInt64(lines[1]), String(size) == lines[1] else {
            throw .malformed("the size line \"\(lines[1])\" is not a decimal number")
        }
        guard let rootBytes = Data(base64Encoded: String(lines[2])).map(Array.init),
            let root = Digest256(bytes: rootBytes)
        else { throw .malformed("the root hash line is not 32 bytes of base64") }
        // C2SP tlog-checkpoint: lines after the root are extension lines,
        // signed with the rest; none is empty (the text holds no blank line).
        let extensionLines = Array(lines[3..<(lines.count - 1)])
        let heads = try Self.headsRoot(extensionLines)
        var verified = false
        var names: [String] = []
        for line in signatures.split(separator: "\n", omittingEmptySubsequences: true) {
            guard line.hasPrefix("\u{2014} ") else { throw .malformed("a signature line does not start with \"— \"") }
            let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, let blob = Data(base64Encoded: String(fields[1])).map(Array.init),
                blob.count >= 5
            else { throw .malformed("a signature line is not \"— <name> <base64>\"") }
            names.append(String(fields[0]))
            guard fields[0] == key.name, Array(blob[0..<4]) == key.keyID else { continue }
            guard blob.count == 68,
                Ed25519.verify(signature: Array(blob[4...]), of: Array(text.utf8), publicKey: key.publicKey)
            else { throw .unverified("the signature by \(key.name) is not valid for this text") }
            verified = true
        }
        guard verified else {
            throw .unverified(
                "it is not signed by \(key.name)+\(Hex.encode(key.keyID))"
                    + (names.isEmpty ? "" : " (signed by: \(names.joined(separator: ", ")))"))
        }
        // C2SP tlog-checkpoint: the origin names the log, and a verifier checks
        // it; here the log is named by its key, so a note of another origin is
        // not this log's checkpoint even when this key signed it.
        guard lines[0] == key.name else {
            throw .unverified(
                "its origin line \(String(lines[0]).debugDescription) is not the key's name \(key.name): it is not a checkpoint of this log"
            )
        }
        self.init(origin: String(lines[0]), size: size, root: root, heads: heads)
        self.extensions = extensionLines.map(String.init)
    }
}
