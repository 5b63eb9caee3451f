import FoundationEssentials
import LedgerCore

// MARK: - Cosignatures on a bundle's checkpoint, as the bundle tools check them

/// The witnesses an auditor gives `jqc verify --bundle` (`--witness-key`,
/// repeatable, and `--witness-quorum`, default all) and the check of the
/// bundle checkpoint's cosignature/v1 lines against them (C2SP
/// `tlog-cosignature`), made as `Tools/verify-ledger`'s `check_cosignatures`
/// and `Tools/verify-bundle-go`'s `checkCosignatures` make it: the same
/// order, the same lines. A line by a key not given is ignored (signed-note).
struct BundleWitnesses {
    /// A witness's cosigner verifier key, `<name>+<key id>+<base64(0x04 ‖ key)>`.
    struct Key {
        var name: String
        var keyID: UInt32
        var publicKey: [UInt8]

        var described: String {
            let hex = String(keyID, radix: 16)
            return "\(BundleCheck.shown(name)) (key id \(String(repeating: "0", count: 8 - hex.count) + hex))"
        }
    }

    var keys: [Key]
    var quorum: Int

    /// The witnesses given; the error is the UNREADABLE verdict.
    init(keys texts: [String], quorum quorumText: String?) throws(BundleCheck.NotVerified) {
        var keys: [Key] = []
        for text in texts {
            let key = try Self.parse(text)
            if keys.contains(where: { $0.name.utf8.elementsEqual(key.name.utf8) }) {
                throw BundleCheck.NotVerified("--witness-key names the witness \(BundleCheck.shown(key.name)) twice")
            }
            keys.append(key)
        }
        self.keys = keys
        guard let quorumText else {
            quorum = keys.count
            return
        }
        guard !keys.isEmpty else {
            throw BundleCheck.NotVerified(
                "--witness-quorum needs --witness-key (the witnesses whose cosignatures count)")
        }
        let digits = !quorumText.isEmpty && quorumText.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        guard digits, let quorum = Int(quorumText), quorum >= 1, quorum <= keys.count else {
            throw BundleCheck.NotVerified(
                "--witness-quorum must be a whole number from 1 to \(keys.count) (the --witness-key given)")
        }
        self.quorum = quorum
    }

    static func parse(_ text: String) throws(BundleCheck.NotVerified) -> Key {
        let (name, rest) = VerifierKey.partition(text)
        let (id, blob) = VerifierKey.partition(rest)
        let raw = StrictBase64.decode(blob) ?? []
        let hex = id.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit }
        guard id.unicodeScalars.count == 8, hex, VerifierKey.isKeyName(name), raw.count == 33, raw[0] == 4,
            let keyID = UInt32(id, radix: 16)
        else {
            throw BundleCheck.NotVerified(
                "--witness-key \(BundleCheck.shown(text)) is not an Ed25519 cosigner key (<name>+<key id>+<base64 of "
                    + "0x04 and 32 key bytes>)")
        }
        guard keyID == VerifierKey.keyHash(name, raw) else {
            throw BundleCheck.NotVerified(
                "--witness-key \(BundleCheck.shown(text)) has a key id that does not match the key")
        }
        return Key(name: name, keyID: keyID, publicKey: Array(raw[1...]))
    }

    static func counted(_ n: Int) -> String { n == 1 ? "1 witness" : "\(n) witnesses" }

    /// POSIX seconds as RFC 3339 UTC, or as a number past the year 9999.
    static func time(_ t: UInt64) -> String {
        guard t <= 253_402_300_799 else { return "POSIX time \(t)" }
        // Whole seconds: the microseconds' ".000000" left out.
        let stamped = Timestamp(microsecondsSinceEpoch: Int64(t) * 1_000_000).iso8601
        return stamped.dropLast(".000000Z".count) + "Z"
    }

    /// The line saying which given witnesses cosigned `note` (the bundle's
    /// checkpoint, already opened with the device's key): each line by a
    /// given key must be a cosignature/v1 that verifies over the note's body,
    /// and at least `quorum` of them must have one.
    func check(_ note: String) throws(BundleCheck.NotVerified) -> String {
        let scalars = Array(note.unicodeScalars)
        var split = scalars.count - 2
        while split > 0, !(scalars[split] == "\n" && scalars[split + 1] == "\n") { split -= 1 }
        let body = Array(String(String.UnicodeScalarView(scalars[...split])).utf8)
        let lines = scalars[(split + 2)..<(scalars.count - 1)].split(separator: "\n", omittingEmptySubsequences: false)
        var newest: [Int: UInt64] = [:]
        for line in lines {
            let rest = line.dropFirst(2)
            let space = rest.firstIndex(of: " ") ?? rest.endIndex
            let name = String(String.UnicodeScalarView(rest[..<space]))
            let raw =
                space == rest.endIndex
                ? []
                : StrictBase64.decode(String(String.UnicodeScalarView(rest[(space + 1)...])))
                    ?? []
            guard raw.count >= 4 else { continue }
            let id = raw[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard let index = keys.firstIndex(where: { $0.name.utf8.elementsEqual(name.utf8) && $0.keyID == id })
            else { continue }
            let key = keys[index]
            guard raw.count == 76 else {
                throw BundleCheck.NotVerified(
                    "the checkpoint carries a cosignature by \(key.described) that is not a cosignature/v1 "
                        + "(\(raw.count) bytes, not 76)")
            }
            let t = raw[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let message = Array("cosignature/v1\ntime \(t)\n".utf8) + body
            guard Ed25519.verify(signature: Array(raw[12...]), of: message, publicKey: key.publicKey) else {
                throw BundleCheck.NotVerified(
                    "the checkpoint carries a cosignature by \(key.described) that does not verify")
            }
            newest[index] = max(t, newest[index] ?? 0)
        }
        let names = keys.indices.compactMap { index in
            newest[index].map { "\(BundleCheck.shown(keys[index].name)) at \(Self.time($0))" }
        }
        let count = "\(names.count) of \(Self.counted(keys.count)) given"
        guard !names.isEmpty else {
            throw BundleCheck.NotVerified(
                "the checkpoint carries no cosignature by the \(Self.counted(keys.count)) given (quorum \(quorum) "
                    + "not met)")
        }
        guard names.count >= quorum else {
            throw BundleCheck.NotVerified(
                "the checkpoint is cosigned by \(names.joined(separator: ", ")) only (\(count), quorum \(quorum) "
                    + "not met)")
        }
        return "cosigned by \(names.joined(separator: ", ")) (\(count), quorum \(quorum) met)"
    }
}
