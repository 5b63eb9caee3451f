import Foundation
import LedgerTestSupport
import Testing

/// No public API appends an event without a decision: the raw appends of
/// the store (`InspectionLedger.append`, `record(_ events:…)`,
/// `ProjectionSet.append`, `EventLog.write`, `LedgerWriter.append`) are the
/// SPI `RawAppend`, and only the store itself, a salvage and the benchmarks
/// import it (`Tools/test` checks the same). Read from the sources, as the
/// module's public surface is written.
@Suite struct RawAppendSurfaceTests {
    /// One public declaration: its attributes and signature up to its body.
    struct Declaration {
        var file: String
        var line: Int
        var text: String
    }

    /// Every `func` declaration of the Swift files under `Sources/DIRECTORY`,
    /// with the attribute lines above it.
    static func declarations(in directory: String) throws -> [Declaration] {
        let root = Products.repositoryFile("Sources/" + directory)
        var found: [Declaration] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: root).sorted() where name.hasSuffix(".swift") {
            let lines = try String(contentsOfFile: root + "/" + name, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (index, line) in lines.enumerated() where line.contains("func ") {
                var start = index
                while start > 0, lines[start - 1].trimmingCharacters(in: .whitespaces).hasPrefix("@") { start -= 1 }
                var end = index
                while end < lines.count - 1, !lines[end].contains("{") { end += 1 }
                found.append(
                    Declaration(
                        file: directory + "/" + name, line: index + 1,
                        text: lines[start...end].joined(separator: "\n")))
            }
        }
        return found
    }

    /// A declaration that appends events it is handed: it takes pending or
    /// already-made events, or a closure over the store's writer.
    static func appendsRaw(_ text: String) -> Bool {
        ["[PendingEvent]", "_ events: [InspectionEvent]", "(LedgerWriter) throws", "(_ event: PendingEvent)"]
            .contains { text.contains($0) }
    }

    static func isPublic(_ text: String) -> Bool {
        text.contains("public func") || text.contains("open func")
    }

    @Test(arguments: ["InspectionStore", "LedgerStore", "InspectionUseCases", "SyncWorker", "JQCCommands"])
    func noPublicDeclarationAppendsWithoutADecision(_ module: String) throws {
        let raw = try Self.declarations(in: module).filter { Self.isPublic($0.text) && Self.appendsRaw($0.text) }
        for declaration in raw {
            #expect(
                declaration.text.contains("@_spi(RawAppend)"),
                "\(declaration.file):\(declaration.line) appends events without a decision and is public:\n\(declaration.text)"
            )
        }
        // The store's raw appends exist, and are found: the check reads what it checks.
        if module == "InspectionStore" { #expect(raw.count >= 2) }
        if module == "LedgerStore" { #expect(raw.count >= 3) }
    }

    /// Who may import the SPI: the store's own modules, a salvage, the benchmarks.
    @Test func onlyTheStoreASalvageAndTheBenchmarksImportTheRawAppend() throws {
        let allowed = [
            "InspectionStore/", "LedgerStore/", "InspectionUseCases/Ledger/LedgerSalvage.swift", "ledger-bench/",
        ]
        let sources = Products.repositoryFile("Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources))
        var importers: [String] = []
        while let path = enumerator.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: sources + "/" + path, encoding: .utf8)
            if text.contains("@_spi(RawAppend) import") || text.contains("@_spi(RawAppend) @testable import") {
                importers.append(path)
            }
        }
        #expect(importers.contains("InspectionUseCases/Ledger/LedgerSalvage.swift"))
        for path in importers {
            #expect(allowed.contains { path.hasPrefix($0) }, "\(path) imports the raw append (SPI RawAppend)")
        }
    }
}
