import FoundationEssentials
import LedgerCore

// MARK: - The check of a proof bundle, as the bundle tools make it

/// `jqc verify --bundle`: the check `Tools/verify-ledger --bundle` and
/// `Tools/verify-bundle-go` make (Schemas/ledger-format.md § Proof bundles),
/// in the same order and with the same verdict lines, so the three agree on
/// every bundle. It needs no ledger: an auditor runs it on a bundle alone.
public enum BundleCheck {
    public static let format = "jqc-proof-bundle/1"
    /// The bundle that also proves its last record is the stream's head.
    public static let completeFormat = "jqc-proof-bundle/2"
    /// The line after a verified bundle's verdict: what no bundle proves.
    public static let notProven = "not proven: that the inspection had no version after the last one shown"

    /// The outcome: the lines to print and the exit status (0 verified, 1
    /// not verified, 2 unreadable); `detail` is for standard error.
    public struct Outcome: Sendable, Equatable {
        public var lines: [String]
        public var status: Int32
        public var detail: String?
    }

    /// Checks the bundle in the file at `path` against an optional pinned
    /// verifier key, the trusted checkpoint in `trustedFile`, and the
    /// witnesses whose cosignatures must verify (`BundleWitnesses`).
    public static func check(
        file path: String, key: String?, trustedFile: String?, witnessKeys: [String] = [],
        witnessQuorum: String? = nil
    ) -> Outcome {
        var pinned: VerifierKey?
        if let key {
            do {
                pinned = try VerifierKey(key)
            } catch {
                return Outcome(lines: ["UNREADABLE: --key \(error.reason)"], status: 2)
            }
        }
        let witnesses: BundleWitnesses
        do {
            witnesses = try BundleWitnesses(keys: witnessKeys, quorum: witnessQuorum)
        } catch {
            return Outcome(lines: ["UNREADABLE: \(error.reason)"], status: 2)
        }
        var trusted: String?
        if let trustedFile {
            guard let data = FileManager.default.contents(atPath: trustedFile),
                let text = String(validating: [UInt8](data), as: UTF8.self)
            else {
                return unreadable(
                    "cannot read the trusted checkpoint \(shown(trustedFile))", "not a readable file of UTF-8 text")
            }
            trusted = text
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return unreadable("cannot read \(shown(path))", "no readable file there")
        }
        return check([UInt8](data), pinned: pinned, trusted: trusted, witnesses: witnesses)
    }

    static func unreadable(_ verdict: String, _ detail: String?) -> Outcome {
        Outcome(lines: ["UNREADABLE: \(verdict)"], status: 2, detail: detail)
    }

    /// Checks the bundle `data` against an optional pinned verifier key and
    /// trusted checkpoint (the text of the auditor's file).
    package static func check(_ data: [UInt8], pinned: VerifierKey?, trusted: String?) -> Outcome {
        check(data, pinned: pinned, trusted: trusted, witnesses: nil)
    }

    /// The same, and the cosignatures of the given witnesses checked last.
    static func check(_ data: [UInt8], pinned: VerifierKey?, trusted: String?, witnesses: BundleWitnesses?) -> Outcome {
        let bundle: Bundle
        do {
            bundle = try Bundle(StrictJSON.read(data, what: "the bundle"))
        } catch {
            return Outcome(lines: ["UNREADABLE: \(error.verdict)"], status: 2, detail: error.detail)
        }
        var detail: String?
        do {
            let proven = try verify(bundle, pinned: pinned, trusted: trusted, detail: &detail)
            // The cosignatures last, after every other check (as both tools do).
            var lines = [proven.verdict]
            if let witnesses, !witnesses.keys.isEmpty { lines.append(try witnesses.check(bundle.checkpoint)) }
            return Outcome(lines: lines + [proven.complete ?? notProven], status: 0, detail: detail)
        } catch {
            return Outcome(lines: ["NOT VERIFIED: \(error.reason)"], status: 1, detail: detail)
        }
    }

    struct NotVerified: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// What a bundle that verifies shows: its verdict line, the key, the
    /// signed tree, and each record (its bytes, as read, and its leaf hash).
    struct Proven {
        struct Record {
            var raw: [UInt8]
            var record: BundleRecord
            var leaf: Digest256
        }

        var verdict: String
        var key: VerifierKey
        var size: UInt64
        var root: Digest256
        var records: [Record]
        /// A /2 bundle's second line: the last record is the head.
        var complete: String?
    }

    static func plural(_ n: Int, _ word: String) -> String { n == 1 ? "\(n) \(word)" : "\(n) \(word)s" }
    static func plural(_ n: UInt64, _ word: String) -> String { plural(Int(n), word) }

    static func hash(_ text: String, _ path: String) throws(NotVerified) -> Digest256 {
        guard let raw = StrictBase64.decode(text), raw.count == 32, let digest = Digest256(bytes: raw) else {
            throw NotVerified("\(path) is not a base64 hash of 32 bytes")
        }
        return digest
    }

    /// 3. An entry: in the tree of `size` records with `root` at its
    /// position, and saying what its record says.
    static func included(
        _ entry: Bundle.Entry, size: UInt64, root: Digest256, detail: inout String?
    ) throws(NotVerified) -> Proven.Record {
        let path = entry.path
        guard let raw = StrictBase64.decode(entry.record) else { throw NotVerified("\(path).record is not base64") }
        var proof: [Digest256] = []
        for (i, text) in entry.inclusion.enumerated() {
            proof.append(try hash(text, "\(path).inclusion[\(i)]"))
        }
        let position = entry.position
        guard position >= 1, position <= size else {
            throw NotVerified("\(path).position \(position) is outside the signed tree of \(size) records")
        }
        let leaf = SHA256Hasher().digest(prefix: 0, raw, range: 0..<raw.count)
        guard Merkle.verifyInclusion(leafHash: leaf, leaf: position - 1, size: size, proof: proof, root: root) else {
            throw NotVerified("\(path) (record \(position)) is not in the signed tree at that position")
        }
        let record: BundleRecord
        do {
            record = try BundleRecord(raw)
        } catch {
            detail = "\(path).record: \(error.reason)"
            throw NotVerified("\(path).record is not a ledger record (Schemas/ledger-format.md § A record)")
        }
        if record.position != position {
            throw NotVerified("\(path) says position \(position), its record says \(record.position)")
        }
        if record.streamVersion != entry.streamVersion {
            throw NotVerified(
                "\(path) says stream version \(entry.streamVersion), its record says \(record.streamVersion)")
        }
        if !record.type.utf8.elementsEqual(entry.type.utf8) {
            throw NotVerified("\(path) says type \"\(shown(entry.type))\", its record says \"\(shown(record.type))\"")
        }
        return Proven.Record(raw: raw, record: record, leaf: leaf)
    }

    /// What a decoded bundle proves; `NotVerified` names the first check
    /// that fails (steps 1–7 of the format page, one function each).
    ///
    /// `continuing` (growth, #30 item 7: an `inspection.received` version 3
    /// re-checked by an audit) is the held record its first one continues:
    /// the records are then versions s … k, s one past it, the first linked
    /// to its leaf. A bundle never has it.
    static func verify(
        _ bundle: Bundle, pinned: VerifierKey?, trusted: String?, detail: inout String?,
        continuing: (version: UInt64, leaf: Digest256)? = nil
    ) throws(NotVerified) -> Proven {
        let key = try signer(of: bundle, pinned: pinned)
        let (size, root, heads) = try key.openCheckpointWithHeads(bundle.checkpoint, "the checkpoint")
        let extends = try trustedExtension(trusted, of: bundle, key: key, size: size, root: root)
        try checkKeyRecord(of: bundle, key: key, size: size, root: root, detail: &detail)
        let (proven, captured) = try linkedRecords(
            of: bundle, continuing: continuing, size: size, root: root, detail: &detail)
        try checkPhotos(of: bundle, captured: captured)
        let pinning = pinned != nil ? "pinned" : "not pinned: the bundle's own key"
        let verdict =
            "verified: inspection \(bundle.inspection), versions 1 to \(bundle.records.count) "
            + "(\(plural(bundle.records.count, "record")), \(plural(bundle.photos.count, "photo"))), in the tree of "
            + "\(plural(size, "record")) signed by \(shown(key.name)) (key id \(key.keyIDHex), \(pinning))\(extends)"
        var complete: String?
        if let head = bundle.head {
            complete = try checkHead(head, of: bundle, last: proven.last, size: size, heads: heads)
        }
        return Proven(verdict: verdict, key: key, size: size, root: root, records: proven, complete: complete)
    }

    /// 1. The bundle's key, the pinned one if one was given.
    static func signer(of bundle: Bundle, pinned: VerifierKey?) throws(NotVerified) -> VerifierKey {
        let key: VerifierKey
        do {
            key = try VerifierKey(bundle.publicKey)
        } catch {
            throw NotVerified("\(bundle.at("public_key")) \(error.reason)")
        }
        if let pinned, key != pinned {
            throw NotVerified(
                "the bundle is signed by \(key.described), not by the pinned key \(pinned.described)")
        }
        return key
    }

    /// 2. The trusted checkpoint the auditor holds, if one was given: the
    /// verdict's ", extending …" (empty without one).
    static func trustedExtension(
        _ trusted: String?, of bundle: Bundle, key: VerifierKey, size: UInt64, root: Digest256
    ) throws(NotVerified) -> String {
        guard let trusted else { return "" }
        let (m, trustedRoot) = try key.openCheckpoint(trusted, "the trusted checkpoint")
        if m > size {
            throw NotVerified(
                "the trusted checkpoint has \(m) records, the bundle's only \(size): the log was truncated, or "
                    + "the bundle is older")
        }
        if m == size, trustedRoot != root {
            throw NotVerified(
                "the trusted checkpoint and the bundle's both have \(size) records but different roots: the "
                    + "log was rewritten")
        }
        if m > 0, m < size {
            guard let consistency = bundle.consistency else {
                throw NotVerified(
                    "the bundle carries no consistency proof from the trusted checkpoint's \(m) records (jqc "
                        + "prove --checkpoint TRUSTED adds it)")
            }
            if consistency.fromSize != m {
                throw NotVerified(
                    "the bundle's consistency proof starts at \(consistency.fromSize) records, the trusted "
                        + "checkpoint has \(m)")
            }
            var proof: [Digest256] = []
            for (i, text) in consistency.proof.enumerated() {
                proof.append(try hash(text, "consistency.proof[\(i)]"))
            }
            guard
                !proof.isEmpty,
                Merkle.verifyConsistency(from: m, to: size, first: trustedRoot, second: root, proof: proof)
            else {
                throw NotVerified(
                    "the bundle's tree of \(size) records does not extend the trusted checkpoint of \(m) "
                        + "records: a record at or before position \(m) was changed, removed or reordered")
            }
        }
        return ", extending the trusted checkpoint of \(plural(m, "record"))"
    }

    /// 4. The key record publishes the key, in the device's own stream.
    static func checkKeyRecord(
        of bundle: Bundle, key: VerifierKey, size: UInt64, root: Digest256, detail: inout String?
    ) throws(NotVerified) {
        let keyPath = bundle.keyRecord.path
        let keyRecord = try included(bundle.keyRecord, size: size, root: root, detail: &detail).record
        if keyRecord.type != "device.key_published" {
            throw NotVerified("\(keyPath) is a \(shown(keyRecord.type)) record, not device.key_published")
        }
        if keyRecord.stream != keyRecord.device { throw NotVerified("\(keyPath) is not in its device's own stream") }
        let device = BundleRecord.uuidText(keyRecord.device)
        if !key.name.utf8.elementsEqual("jqc/\(device)".utf8) {
            throw NotVerified("the key's name \(shown(key.name)) is not jqc/\(device), the device of \(keyPath)")
        }
        if keyRecord.payload[text: "key"] != .text(bundle.publicKey) {
            throw NotVerified("\(keyPath) publishes another key than \(bundle.at("public_key"))")
        }
    }

    /// 5. The records: versions 1, 2, 3 … of the inspection (from the one
    /// after `continuing`), linked; and the photos they capture.
    static func linkedRecords(
        of bundle: Bundle, continuing: (version: UInt64, leaf: Digest256)?, size: UInt64, root: Digest256,
        detail: inout String?
    ) throws(NotVerified) -> (records: [Proven.Record], captured: [Bundle.Photo]) {
        let first = (continuing?.version ?? 0) + 1
        let inspection = bundle.inspection
        if !isLowerUUID(inspection) {
            throw NotVerified("\(bundle.at("inspection")) \"\(shown(inspection))\" is not a lower-case UUID")
        }
        let records = bundle.records
        if records.isEmpty { throw NotVerified("the bundle holds no records of the inspection: it proves nothing") }
        var proven: [Proven.Record] = []
        var previousPosition: UInt64 = 0
        var previousLeaf: Digest256?
        var captured: [Bundle.Photo] = []
        for (i, entry) in records.enumerated() {
            let path = entry.path
            let included = try included(entry, size: size, root: root, detail: &detail)
            let (record, leaf) = (included.record, included.leaf)
            proven.append(included)
            let position = entry.position
            if BundleRecord.uuidText(record.stream) != inspection {
                throw NotVerified("\(path) (record \(position)) belongs to another stream")
            }
            if i == 0, record.streamVersion != first {
                throw NotVerified(
                    "\(path) (record \(position)) is version \(record.streamVersion) of the inspection, not its "
                        + "first: the bundle must start at version \(first)")
            }
            if record.streamVersion != first + UInt64(i) {
                throw NotVerified(
                    "\(path) (record \(position)) is version \(record.streamVersion) of the inspection, expected "
                        + "\(first + UInt64(i)): a record was left out, added or moved")
            }
            if i == 0, let continuing, record.backLink != continuing.leaf.bytes {
                throw NotVerified(
                    "\(path) (record \(position)) does not link to version \(continuing.version) as held here "
                        + "(leaf \(continuing.leaf.hex)), which it continues")
            }
            if position <= previousPosition {
                throw NotVerified("\(path) (record \(position)) comes before the previous version")
            }
            if record.format == 2, i > 0, record.backLink != previousLeaf?.bytes {
                throw NotVerified("\(path) (record \(position)) does not link to the record before it in the bundle")
            }
            previousPosition = position
            previousLeaf = leaf
            if record.type == "photo.captured" {
                guard case .text(let photoID) = record.payload[text: "photo_id"],
                    case .text(let sha256) = record.payload[text: "sha256"]
                else {
                    throw NotVerified(
                        "\(path) (record \(position)) is a photo.captured record without a photo_id and a sha256")
                }
                captured.append(Bundle.Photo(photoID: photoID, sha256: sha256, position: position))
            }
        }
        return (proven, captured)
    }

    /// 6. photos: exactly the records' photo captures, in record order.
    static func checkPhotos(of bundle: Bundle, captured: [Bundle.Photo]) throws(NotVerified) {
        let photos = bundle.photos
        for j in 0..<max(photos.count, captured.count) {
            if j < photos.count, j < captured.count, photos[j] == captured[j] { continue }
            if j < photos.count, !captured.contains(photos[j]) {
                let photo = photos[j]
                throw NotVerified(
                    "\(bundle.at("photos"))[\(j)] (photo \(shown(photo.photoID)), sha256 \(shown(photo.sha256)), record "
                        + "\(photo.position)) is not a photo the records capture")
            }
            if j < captured.count, !photos.contains(captured[j]) {
                let photo = captured[j]
                throw NotVerified(
                    "the photo captured by record \(photo.position) (photo \(shown(photo.photoID)), sha256 "
                        + "\(shown(photo.sha256))) is missing from \(bundle.at("photos"))")
            }
            throw NotVerified("\(bundle.at("photos"))[\(j)] is out of the records' order or appears twice")
        }
    }

    /// 7. (`jqc-proof-bundle/2`) The `head` member: the inspection's head in
    /// the checkpoint's map of stream heads is the bundle's last record.
    static func checkHead(
        _ head: Bundle.Head, of bundle: Bundle, last: Proven.Record?, size: UInt64, heads: Digest256?
    ) throws(NotVerified) -> String {
        guard let heads else {
            throw NotVerified(
                "the checkpoint carries no jqc-heads line: a \(completeFormat) bundle's head cannot be proven")
        }
        guard let last else { throw NotVerified("the bundle holds no records of the inspection: it proves nothing") }
        let k = last.record.streamVersion
        let leaf = try hash(head.leaf, "\(bundle.at("head")).leaf")
        var siblings: [Digest256] = []
        for (i, text) in head.proof.enumerated() {
            siblings.append(try hash(text, "\(bundle.at("head")).proof[\(i)]"))
        }
        let stream = StreamHead(stream: last.record.stream, version: head.streamVersion, leaf: leaf)
        // A proof that cannot be folded (too deep, version 0) places no head in the map either, as the tools say.
        guard (try? HeadMap.root(of: stream, siblings: siblings)) == heads else {
            throw NotVerified(
                "\(bundle.at("head")) is not in the checkpoint's map of stream heads (jqc-heads): it proves no head")
        }
        if head.streamVersion != k || leaf != last.leaf {
            throw NotVerified(
                "the inspection's head at this size is version \(head.streamVersion), not version \(k), the "
                    + "bundle's last: version \(k + 1) exists at this size")
        }
        return
            "complete: version \(k) is the inspection's last in the tree of \(plural(size, "record")) (its head in the map of stream heads)"
    }

    static func isLowerUUID(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 36 else { return false }
        for (i, c) in scalars.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                guard c == "-" else { return false }
            } else {
                guard ("0"..."9").contains(c) || ("a"..."f").contains(c) else { return false }
            }
        }
        return true
    }

    /// Text from the input, safe to print: printable ASCII as it is,
    /// anything else as `\u{hex}`; at most `limit` characters, then "...".
    static func shown(_ text: String, limit: Int = 64) -> String {
        var out = ""
        for (i, c) in text.unicodeScalars.enumerated() {
            if i == limit {
                out += "..."
                break
            }
            if c.value >= 0x20, c.value <= 0x7E, c != "\"", c != "\\" {
                out.unicodeScalars.append(c)
            } else {
                out += "\\u{\(String(c.value, radix: 16))}"
            }
        }
        return out
    }
}
