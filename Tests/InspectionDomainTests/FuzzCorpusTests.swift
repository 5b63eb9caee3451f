import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// The kept fuzz corpus (`Tests/Fuzz/corpus/<target>/`) read by the same
/// decoders the fuzz targets drive, in every `swift test`: the seeds from a
/// real ledger must decode, the inputs named `crash-*` (cases that crashed
/// once) must be refused with an error, and those named `found-*` (inputs a
/// fuzz run kept for the coverage they add) may go either way. A trap would
/// end the test run.
@Suite struct FuzzCorpusTests {
    static func inputs(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = Products.repositoryFile("Tests/Fuzz/corpus/\(target)")
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { name in
            (name, [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))))
        }
    }

    @Test func storedRecordsDecodeAndCrashCasesAreRefused() throws {
        let inputs = try Self.inputs("record")
        #expect(inputs.filter { !$0.name.hasPrefix("found-") }.count >= 10)
        for (name, bytes) in inputs {
            if name.hasPrefix("crash-") {
                #expect(throws: RecordError.self, "\(name)") { try EventRecord(decoding: bytes) }
            } else if name.hasPrefix("found-") {
                _ = Result { try EventRecord(decoding: bytes) }
            } else {
                let record = try EventRecord(decoding: bytes)
                #expect(record.encoded() == bytes, "\(name) does not re-encode to its bytes")
            }
        }
    }

    @Test func payloadsDecodeAndCrashCasesAreRefused() throws {
        let types = InspectionEventType.allCases
        for (name, bytes) in try Self.inputs("payload") {
            guard let selector = bytes.first else { continue }
            // As Tests/Fuzz/targets/payload.swift reads its input.
            let type = types[Int(selector & 0x7F) % types.count]
            let version = selector & 0x80 == 0 ? type.schemaVersion : 1
            let payload = Array(bytes.dropFirst())
            // The fuzz target also reads the payload as a generic item and as
            // every field type's value; either outcome is fine, a trap is not.
            _ = Result { try CBORValue(decoding: payload) }
            for fieldType in FieldType.allCases {
                _ = Result { try FieldValue(cbor: try CBORValue(decoding: payload), type: fieldType) }
            }
            if name.hasPrefix("crash-") {
                #expect(throws: DomainError.self, "\(name)") {
                    try EventUpcaster.decode(
                        type: type.rawValue, schemaVersion: version, payload: payload, template: nil)
                }
            } else if name.hasPrefix("found-") {
                _ = Result {
                    try EventUpcaster.decode(
                        type: type.rawValue, schemaVersion: version, payload: payload, template: nil)
                }
            } else if version == type.schemaVersion {
                _ = try InspectionEvent.decode(type: type.rawValue, schemaVersion: version, payload: payload)
            }
        }
    }

    @Test(arguments: ["json", "reference"])
    func jsonParsesAndCrashCasesAreRefused(target: String) throws {
        for (name, bytes) in try Self.inputs(target) {
            if name.hasPrefix("crash-") {
                #expect(throws: DomainError.self, "\(name)") { try Template(json: try JSONValue(parsing: bytes)) }
            } else if name.hasPrefix("found-") {
                _ = Result { try Template(json: try JSONValue(parsing: bytes)) }
            } else {
                let value = try JSONValue(parsing: bytes)
                #expect(try JSONValue(parsing: value.serialized()) == value, "\(name) does not round-trip")
            }
        }
    }
}
