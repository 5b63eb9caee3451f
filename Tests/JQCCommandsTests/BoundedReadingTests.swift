import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// A handover file of 1 GiB (sparse: it takes no disk) received under
/// `ulimit -v 2 GiB`, through the built `jqc`: judged chunk by chunk as it is
/// read (`HandoverFileReader`), it is refused at its first byte no JSON text
/// can hold, with nothing recorded, and never ends `jqc` by a signal (which
/// reading it whole and copying it did: 2 GiB).
@Suite struct BoundedReadingTests {
    let directory = TemporaryDirectory(prefix: "bounded-reading")

    /// What the file starts with; the rest is zero bytes up to 1 GiB.
    static let prefixes = [
        "", #"{"format":"jqc-handover/3","mode":"share","photo_files":[{"sha256":"00","data":"AAAA"#,
    ]

    @Test(arguments: prefixes)
    func aGibibyteFileUnderATwoGibibyteLimitIsRefusedNotKilled(_ prefix: String) throws {
        let jqc = JQCRunner(ledger: directory.appending("r"), environment: ["JQC_AS_TEST": "1"]).reportingKinds
        try JQCRunner.succeeded(jqc("init"))
        let before = try JQCRunner.succeeded(jqc("--json", "log")).stdout
        let path = directory.appending("big.json")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(prefix.utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        defer { try? FileManager.default.removeItem(atPath: path) }

        let command = "ulimit -v 2097152; exec \"$0\" --as Cy receive \"$1\""
        let result = try ProcessRun.run(
            "/bin/bash", ["-c", command, Products.executable("jqc"), path], environment: jqc.environment)
        #expect(!result.signalled, "ended by signal \(result.status): \(result.stderr)")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.errorKind == "HandoverFile.Unreadable.unexpectedByte", "not well-formed JSON: \(result.stderr)")
        #expect(result.errorDetail?["byte"] as? Int == 0, "byte 0x0: \(result.stderr)")
        #expect(result.errorDetail?["offset"] as? Int == prefix.utf8.count, "\(result.stderr)")
        #expect(try JQCRunner.succeeded(jqc("--json", "log")).stdout == before)
        let photos = try FileManager.default.contentsOfDirectory(atPath: jqc.ledger + "/photos")
        #expect(photos.filter { !$0.hasPrefix(".") }.isEmpty, "\(photos)")
    }

    /// The receiver's `receive FILE` under an address-space limit of
    /// `kibibytes`, as `ulimit -v` sets it.
    func receiveLimited(_ jqc: JQCRunner, _ file: String, kibibytes: Int) throws -> ProcessResult {
        let command = "ulimit -v \(kibibytes); exec \"$0\" --as Cy receive \"$1\""
        return try ProcessRun.run(
            "/bin/bash", ["-c", command, Products.executable("jqc"), file], environment: jqc.environment)
    }

    /// A photo's bytes: a JPEG's first bytes and its number, then zeros
    /// (distinct photos, made at once: the test's own debug code writes no
    /// 50 MiB byte by byte).
    static func photo(_ number: Int, size: Int) -> Data {
        var bytes = Data(count: size)
        bytes.replaceSubrange(0..<5, with: [0xFF, 0xD8, 0xFF, 0xE0, UInt8(number)])
        return bytes
    }

    /// A well-formed, consistently signed handover file of about 1 GiB (the
    /// most a file may be: 15 photos of 50 MiB, the most a photo may be, and
    /// one of 17 MiB, 1,022 MiB of base64) received under `ulimit -v 2 GiB`
    /// and taken whole: read in chunks, each photo decoded into its staging
    /// file as it arrives, so memory holds one photo at a time, never the
    /// file. (The last release reads it whole, copies it and parses it: it
    /// dies under the same limit, "failed to allocate 1072386048 bytes",
    /// checked by hand.)
    ///
    /// Made quickly: the sender captures a small photo for each, then its
    /// log is rewritten consistently (`LedgerForger`) so each capture names
    /// the large photo's hash and size, and its store holds a short stand-in
    /// under that hash; its `jqc handover` then writes a small file, signed
    /// over those records, and the test puts each photo's real base64 in
    /// place of its stand-in's. Capturing 800 MiB durably, and writing 1 GiB
    /// of JSON a character at a time in a debug build, would take minutes;
    /// what is left is the reception itself (its photos stored durably).
    @Test func aWellFormedGibibyteFileUnderATwoGibibyteLimitIsReceived() throws {
        let sender = JQCRunner(ledger: directory.appending("a"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(sender("init"))
        try JQCRunner.succeeded(sender("pull", "--from", SampleReference.path))
        let inspection = try sender.startInspection("Restroom QC")
        let sizes = Array(repeating: 50 << 20, count: 15) + [17 << 20]
        for number in sizes.indices {
            let path = directory.appending("photo.jpg")
            try Self.photo(number, size: 64).write(to: URL(fileURLWithPath: path))
            try JQCRunner.succeeded(sender("--as", "Dana", "photo", inspection, "Photo of problem area", path))
        }
        let log = try JQCRunner.succeeded(sender("--json", "log")).stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let captures = log.filter { $0["type"] as? String == "photo.captured" }.compactMap { $0["position"] as? Int }
        #expect(captures.count == sizes.count)
        for (number, position) in captures.enumerated() {
            let large = Self.photo(number, size: sizes[number])
            let hash = SHA256Hasher().digest(Array(large))
            var small: Digest256?
            try LedgerForger.rewrite(store: sender.ledger + "/store", from: UInt64(position)) {
                guard case .photoCaptured(var captured)? = try? InspectionEvent.decode($0) else { return }
                small = captured.photo.sha256
                captured.photo.sha256 = hash
                captured.photo.size = large.count
                $0.event.payload = InspectionEvent.photoCaptured(captured).payloadCBOR()
            }
            let photos = sender.ledger + "/photos/"
            try FileManager.default.removeItem(atPath: photos + (try #require(small)).hex)
            // The stand-in's base64 names the photo: "stand-in N" is found once in the file.
            try Data("stand-in \(number)".utf8).write(to: URL(fileURLWithPath: photos + hash.hex))
        }
        let small = directory.appending("small.json")
        try JQCRunner.succeeded(sender("--as", "Dana", "handover", inspection, "-o", small, "--to", "Ben"))
        var text = try String(contentsOfFile: small, encoding: .utf8)
        let file = directory.appending("big.json")
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        let out = try #require(FileHandle(forWritingAtPath: file))
        for (number, size) in sizes.enumerated() {
            let standIn = "\"" + Data("stand-in \(number)".utf8).base64EncodedString() + "\""
            let range = try #require(text.range(of: standIn))
            try out.write(contentsOf: Data(text[..<range.lowerBound].utf8) + Data("\"".utf8))
            try out.write(contentsOf: Self.photo(number, size: size).base64EncodedData())
            text = "\"" + text[range.upperBound...]
        }
        try out.write(contentsOf: Data(text.utf8))
        try out.close()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let written = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(written > 1_020 << 20 && written <= 1 << 30, "\(written)")

        let receiver = JQCRunner(ledger: directory.appending("b"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(receiver("init"))
        try JQCRunner.succeeded(receiver("pull", "--from", SampleReference.path))
        let result = try receiveLimited(receiver, file, kibibytes: 2 << 20)
        #expect(!result.signalled, "ended by signal \(result.status): \(result.stderr)")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("16 photos verified"), "\(result.stdout)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: receiver.ledger + "/photos")
        #expect(stored.filter { !$0.hasPrefix(".") }.count == 16, "\(stored)")
        try JQCRunner.succeeded(receiver("check", "--photos"))
    }

    /// A photo whose `data` member name is itself escaped (`"d\u0061ta"`,
    /// the same name to the strict reading) is staged like the plain name,
    /// never decoded in memory: 700 MiB of base64 under `ulimit -v 2 GiB` is
    /// refused by the strict reading (the file is no handover file
    /// otherwise), not ended by a signal, and no staging file is left.
    @Test(arguments: [#""d\u0061ta""#, #""\u0064\u0061\u0074\u0061""#, #""data""#])
    func anEscapedDataNameIsStagedLikeThePlainOne(_ name: String) throws {
        let jqc = JQCRunner(ledger: directory.appending("r"), environment: ["JQC_AS_TEST": "1"]).reportingKinds
        try JQCRunner.succeeded(jqc("init"))
        let path = directory.appending("escaped.json")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let out = try #require(FileHandle(forWritingAtPath: path))
        try out.write(contentsOf: Data(#"{"format":"jqc-handover/3","photo_files":[{"sha256":"00",\#(name):""#.utf8))
        let piece = Data(repeating: UInt8(ascii: "A"), count: 1 << 24)
        for _ in 0..<(700 >> 4) { try out.write(contentsOf: piece) }
        try out.write(contentsOf: Data("\"}]}\n".utf8))
        try out.close()
        defer { try? FileManager.default.removeItem(atPath: path) }

        let result = try receiveLimited(jqc, path, kibibytes: 2 << 20)
        #expect(!result.signalled, "ended by signal \(result.status): \(result.stderr)")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.errorKind == "HandoverFile.Unreadable.strict", "UNREADABLE: \(result.stderr)")
        #expect(result.errorDetail?["reason"] as? String == "BundleUnreadable.missingMember", "\(result.stderr)")
        let staging = jqc.ledger + "/photos/.incoming"
        let left = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
        #expect(left.isEmpty, "\(left)")
    }
}
