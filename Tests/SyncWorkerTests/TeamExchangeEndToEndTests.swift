import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// Issue #30's property through the built `jqc`, small and bounded: three
/// devices answer, photograph and flag issues in a seeded order and pass `--share`
/// files along (so work crosses two hops), then everyone shares with
/// everyone. Every device shows the same form; one submits and syncs
/// against the development server's reference profile, and the server
/// holds one record with every photo and issue, none twice, also after the others
/// sync. (`TeamExchangePropertyTests` runs the long history in-process.)
@Suite struct TeamExchangeEndToEndTests {
    static let answers: [(field: String, values: [String])] = [
        ("2", ["1", "3", "5"]), ("3", ["2", "4"]), ("5", ["pass", "fail"]), ("9", ["clean", "wet floor"]),
    ]

    /// A PNG file no other capture of the run has, in `ledger`'s directory.
    static func photoFile(_ ledger: SampleLedger, serial: Int) throws -> String {
        let path = ledger.directory.appending("capture-\(serial).png")
        try SampleReference.png(width: 2 + serial, red: UInt8(serial % 250)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [UInt64(7), 21])
    func threeDevicesShowOneFormAndTheServerGetsOneRecord(seed: UInt64) throws {
        let server = try DevServer(profile: .reference)
        let team = try (0..<3).map { _ in try SampleLedger(serverURL: server.baseURL) }
        for member in team { try member.login() }
        let id = try team[0].draft()
        try team[0].answer(id)
        var random = SeededRandom(seed: seed)
        var holding: [Int] = [0]
        var photoFields = ["10"]
        var issues = 0
        for exchange in 1...6 {
            let from = holding[Int.random(in: 0..<holding.count, using: &random)]
            let to = (from + Int.random(in: 1...2, using: &random)) % 3
            let (field, values) = Self.answers[Int.random(in: 0..<Self.answers.count, using: &random)]
            let value = values[Int.random(in: 0..<values.count, using: &random)]
            let set = try team[from].jqc("set", id.lowercased, "\(field)=\(value)")
            #expect(set.status == 0, "\(set.stderr)")
            if Int.random(in: 0..<2, using: &random) == 0, !photoFields.isEmpty {
                let file = try Self.photoFile(team[from], serial: exchange)
                let taken = try team[from].jqc("photo", id.lowercased, photoFields.removeFirst(), file)
                #expect(taken.status == 0, "\(taken.stderr)")
            } else if Int.random(in: 0..<2, using: &random) == 0 {
                issues += 1
                let flagged = try team[from].jqc(
                    "flag", id.lowercased, "--severity", "high", "--description", "issue \(exchange)")
                #expect(flagged.status == 0, "\(flagged.stderr)")
            }
            try ShareEndToEndTests.exchange(id, from: team[from], to: team[to], name: "s\(exchange)")
            if !holding.contains(to) { holding.append(to) }
        }
        var serial = 0
        for from in 0..<3 {
            for to in 0..<3 where to != from {
                serial += 1
                try MergeTruthEndToEndTests.exchange(id, from: team[from], to: team[to], name: "settle\(serial)")
            }
        }
        let forms = try team.map { try ShareEndToEndTests.form($0, id).fields }
        for (index, form) in forms.enumerated().dropFirst() {
            #expect(form == forms[0], "device \(index) shows another form than device 0")
        }
        let photos = 1 - photoFields.count
        #expect(photos == 1 && issues > 0, "the seeded history reaches a photo and an issue")
        let shownPhotos = try team.map { ledger in
            try MergeTruthEndToEndTests.json(ledger, "show", id.lowercased)["photos"]?.arrayValue?.count ?? -1
        }
        #expect(shownPhotos == [photos, photos, photos], "every photo on every device, none twice")
        let shownIssues = try team.map { ledger in
            try MergeTruthEndToEndTests.json(ledger, "show", id.lowercased)["issues"]?.arrayValue?.count ?? -1
        }
        #expect(shownIssues == [issues, issues, issues], "every issue on every device, none twice")

        // The last to receive submits; the others get the submit and send nothing.
        #expect(try team[2].jqc("submit", id.lowercased).status == 0)
        for to in [0, 1] {
            try MergeTruthEndToEndTests.exchange(id, from: team[2], to: team[to], name: "submitted\(to)")
        }
        for member in [team[2], team[0], team[1]] {
            let sync = try member.jqc("sync")
            #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        }
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("photos") == photos)
        #expect(try server.count("issues") == issues)
        let record = try #require(
            try MergeTruthEndToEndTests.json(team[2], "history")["inspections"]?.arrayValue?.first)
        for field in ["10"].prefix(photos) {
            #expect(record["form_data"]?[field]?.stringValue?.hasPrefix("/uploads/") == true, "\(record)")
        }
    }
}
