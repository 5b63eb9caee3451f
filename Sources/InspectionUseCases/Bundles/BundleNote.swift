import FoundationEssentials
import LedgerCore

// MARK: - C2SP signed notes, as golang.org/x/mod/sumdb/note reads them

/// A signed-note verifier key, `<name>+<key id>+<base64(0x01 ‖ key)>`, read
/// as both bundle tools read it.
package struct VerifierKey: Equatable {
    struct Malformed: Error {
        var reason: String
    }

    var name: String
    var keyID: UInt32
    var publicKey: [UInt8]

    init(_ text: String) throws(Malformed) {
        let (name, rest) = Self.partition(text)
        let (keyID, blob) = Self.partition(rest)
        let raw =
            StrictBase64.decode(String(blob.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
            ?? []
        let hex = keyID.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit }
        guard keyID.unicodeScalars.count == 8, hex, Self.isKeyName(name), raw.count == 33, raw[0] == 1,
            let id = UInt32(keyID, radix: 16)
        else {
            throw Malformed(reason: "is not an Ed25519 verifier key (<name>+<key id>+<base64 key>)")
        }
        guard id == Self.keyHash(name, raw) else { throw Malformed(reason: "has a key id that does not match the key") }
        self.name = name
        self.keyID = id
        self.publicKey = Array(raw[1...])
    }

    package static func == (a: VerifierKey, b: VerifierKey) -> Bool {
        a.name.utf8.elementsEqual(b.name.utf8) && a.keyID == b.keyID && a.publicKey == b.publicKey
    }

    /// Python's `str.partition("+")`: before the first `+`, and after it.
    static func partition(_ text: String) -> (String, String) {
        guard let plus = text.unicodeScalars.firstIndex(of: "+") else { return (text, "") }
        return (
            String(text.unicodeScalars[..<plus]), String(text.unicodeScalars[text.unicodeScalars.index(after: plus)...])
        )
    }

    static func keyHash(_ name: String, _ raw: [UInt8]) -> UInt32 {
        let digest = SHA256Hasher().digest(Array(name.utf8), [0x0A], raw).bytes
        return digest[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func isKeyName(_ name: String) -> Bool {
        let spaces: Set<UInt32> = [
            0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
        ]
        return !name.isEmpty
            && !name.unicodeScalars.contains {
                $0 == "+" || spaces.contains($0.value) || (0x2000...0x200A).contains($0.value)
            }
    }

    var keyIDHex: String {
        let hex = String(keyID, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    var described: String { "\(BundleCheck.shown(name)) (key id \(keyIDHex))" }

    /// The text of `note` signed by this key (sumdb/note's `Open` with one
    /// known key); `NotVerified` otherwise.
    func open(_ note: String, _ what: String) throws(BundleCheck.NotVerified) -> String {
        let malformed = BundleCheck.NotVerified("\(what) is not a signed note (C2SP signed-note)")
        let scalars = Array(note.unicodeScalars)
        if scalars.contains(where: { $0.value < 0x20 && $0 != "\n" }) { throw malformed }
        var split: Int?
        if scalars.count >= 2 {
            for i in stride(from: scalars.count - 2, through: 0, by: -1)
            where scalars[i] == "\n" && scalars[i + 1] == "\n" {
                split = i
                break
            }
        }
        guard let split else { throw malformed }
        let text = String(String.UnicodeScalarView(scalars[...split]))
        let signatures = Array(scalars[(split + 2)...])
        guard let last = signatures.last, last == "\n" else { throw malformed }
        let lines = signatures.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count <= 100 else { throw malformed }
        var verified = false
        for line in lines {
            guard line.count >= 2, line[line.startIndex] == "\u{2014}", line[line.startIndex + 1] == " " else {
                throw malformed
            }
            let rest = line.dropFirst(2)
            let space = rest.firstIndex(of: " ")
            let name = String(String.UnicodeScalarView(rest[..<(space ?? rest.endIndex)]))
            let blob = space.map { String(String.UnicodeScalarView(rest[rest.index(after: $0)...])) } ?? ""
            guard let signature = StrictBase64.decode(blob), Self.isKeyName(name), !blob.isEmpty, signature.count >= 5
            else { throw malformed }
            let id = signature[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if !name.utf8.elementsEqual(self.name.utf8) || id != keyID || verified { continue }
            guard Ed25519.verify(signature: Array(signature[4...]), of: Array(text.utf8), publicKey: publicKey) else {
                throw BundleCheck.NotVerified("\(what) carries a signature by \(described) that does not verify")
            }
            verified = true
        }
        guard verified else { throw BundleCheck.NotVerified("\(what) is not signed by \(described)") }
        return text
    }

    /// The size and root of a tlog-checkpoint signed by this key whose
    /// origin line is the key's name.
    func openCheckpoint(_ note: String, _ what: String) throws(BundleCheck.NotVerified) -> (UInt64, Digest256) {
        let (size, root, _) = try openCheckpointWithHeads(note, what)
        return (size, root)
    }

    /// `openCheckpoint` and the map root of its `jqc-heads` extension line
    /// (nil without one; the line not `jqc-heads <base64 of 32 bytes>`, or
    /// twice, is refused). Other extension lines are signed and ignored.
    func openCheckpointWithHeads(_ note: String, _ what: String) throws(BundleCheck.NotVerified) -> (
        UInt64, Digest256, Digest256?
    ) {
        let lines = try open(note, what).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var heads: Digest256?
        for line in lines.dropFirst(3) where line.hasPrefix("jqc-heads ") || line == "jqc-heads" {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard heads == nil, fields.count == 2, let raw = StrictBase64.decode(String(fields[1])), raw.count == 32
            else { throw BundleCheck.NotVerified("\(what)'s jqc-heads line is not one base64 hash of 32 bytes") }
            heads = Digest256(bytes: raw)
        }
        if !lines[0].utf8.elementsEqual(name.utf8) {
            throw BundleCheck.NotVerified(
                "\(what)'s origin line \"\(BundleCheck.shown(lines[0]))\" is not the key's name "
                    + BundleCheck.shown(name))
        }
        if lines.count < 4 {
            throw BundleCheck.NotVerified("\(what) is not an origin line, a tree size and a root hash")
        }
        let sizeText = lines[1]
        let digits = !sizeText.isEmpty && sizeText.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        guard digits, sizeText == "0" || !sizeText.hasPrefix("0"), let size = Int64(sizeText) else {
            throw BundleCheck.NotVerified("\(what)'s tree size is not a decimal number")
        }
        guard let raw = StrictBase64.decode(lines[2]), raw.count == 32, let root = Digest256(bytes: raw) else {
            throw BundleCheck.NotVerified("\(what)'s root hash is not 32 bytes of base64")
        }
        return (UInt64(size), root, heads)
    }
}
