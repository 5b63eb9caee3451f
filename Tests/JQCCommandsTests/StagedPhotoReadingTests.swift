import Foundation
import LedgerTestSupport
import Testing

/// A handover file's photos read as `jqc receive` now reads them: each
/// photo's base64 decoded into a staging file while the file is read
/// (`HandoverFileReader`, `PhotoStager`), judged as the strict reading
/// judged the text (escaped `\/` taken, a non-canonical last group refused
/// by its path), stored with the reception, and no staging file left either
/// way (`Schemas/ledger-format.md` § Handover files, reading within bounds).
@Suite struct StagedPhotoReadingTests {
    let directory = TemporaryDirectory(prefix: "staged-photo-reading")

    /// How the sender's file is changed before it is received.
    enum Change: String, CaseIterable, CustomTestStringConvertible {
        /// As `jqc handover` wrote it.
        case none
        /// Written again by JSONSerialization: every `/` escaped as `\/`.
        case slashesEscaped
        /// The second photo's last group with a stray bit.
        case strayBit

        var testDescription: String { rawValue }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

    /// `text` with the last character before its padding given a stray low bit.
    static func strayBit(_ text: String) -> String {
        var characters = Array(text)
        guard let last = characters.lastIndex(where: { $0 != "=" }),
            let value = alphabet.firstIndex(of: characters[last])
        else { return text }
        characters[last] = alphabet[value | 1]
        return String(characters)
    }

    @Test(arguments: Change.allCases)
    func photosAreStagedWhileReadAndNoStagingFileIsLeft(_ change: Change) throws {
        let sender = JQCRunner(ledger: directory.appending("a"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(sender("init"))
        try JQCRunner.succeeded(sender("pull", "--from", SampleReference.path))
        let inspection = try sender.startInspection("Restroom QC")
        for number in 1...2 {
            // A JPEG's first bytes, then 1 MiB that differs per photo.
            var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, UInt8(number)]
            bytes += (0..<(1 << 20) + number).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) }
            let path = directory.appending("photo\(number).jpg")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try JQCRunner.succeeded(sender("--as", "Dana", "photo", inspection, "Photo of problem area", path))
        }
        let file = directory.appending("handover.json")
        try JQCRunner.succeeded(sender("--as", "Dana", "handover", inspection, "-o", file, "--to", "Ben"))
        if change != .none {
            var json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
            var photos = try #require(json["photo_files"] as? [[String: Any]])
            #expect(photos.count == 2)
            if change == .strayBit { photos[1]["data"] = Self.strayBit(try #require(photos[1]["data"] as? String)) }
            json["photo_files"] = photos
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: file))
            if change == .slashesEscaped { #expect(try String(contentsOfFile: file, encoding: .utf8).contains(#"\/"#)) }
        }

        let receiver = JQCRunner(ledger: directory.appending("b"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(receiver("init"))
        try JQCRunner.succeeded(receiver("pull", "--from", SampleReference.path))
        let result = try receiver("--as", "Ben", "--json", "receive", file)
        let stored = try FileManager.default.contentsOfDirectory(atPath: receiver.ledger + "/photos")
            .filter { !$0.hasPrefix(".") }
        let staging = receiver.ledger + "/photos/.incoming"
        let left = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
        #expect(left.isEmpty, "\(left)")
        if change == .strayBit {
            #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
            #expect(
                result.stderr.contains("photo_files[1].data is not standard base64 with padding"), "\(result.stderr)")
            #expect(stored.isEmpty, "\(stored)")
        } else {
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let received = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(received?["photos"] as? Int == 2, "2 photos verified: \(result.stdout)")
            #expect(stored.count == 2, "\(stored)")
            try JQCRunner.succeeded(receiver("check", "--photos"))
        }
    }
}
