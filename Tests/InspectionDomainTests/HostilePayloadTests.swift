import Foundation
import InspectionDomain
import LedgerCore
import Testing

/// Payloads, JSON and reference data nobody here wrote turn into a
/// `DomainError`, never a trap (the fuzz targets of `Tools/fuzz` search for
/// more; each case they find is kept here and in `Tests/Fuzz/corpus/`).
@Suite struct HostilePayloadTests {
    static let types = InspectionEventType.allCases.map(\.rawValue)

    /// For every event type: a map, array or string head claiming 2^64 - 1
    /// entries, and maps and arrays nested ten thousand deep.
    static let payloads: [[UInt8]] = [
        [0xBB] + Array(repeating: 0xFF, count: 8),
        [0xA1, 0x65] + Array("value".utf8) + [0x9B] + Array(repeating: 0xFF, count: 8),
        [0xA1, 0x68] + Array("template".utf8) + [0xBB] + Array(repeating: 0xFF, count: 8),
        [0xA1, 0x68] + Array("template".utf8) + [UInt8](repeating: 0x81, count: 10_000) + [0x00],
        [0xA1, 0x65] + Array("value".utf8) + [UInt8](repeating: 0xA1, count: 10_000) + [0x00, 0x00],
        [UInt8](repeating: 0x81, count: 10_000),
    ]

    @Test(arguments: types)
    func hostilePayloadsAreMalformed(type: String) {
        for payload in Self.payloads {
            let version = InspectionEventType(rawValue: type)!.schemaVersion
            #expect(throws: DomainError.self) {
                try InspectionEvent.decode(type: type, schemaVersion: version, payload: payload)
            }
        }
    }

    @Test func aVersionOneFieldSetWithAHugeLengthIsMalformed() {
        let payload: [UInt8] = [0xA1, 0x65] + Array("field".utf8) + [0x7B] + Array(repeating: 0xFF, count: 8)
        #expect(throws: DomainError.self) {
            try EventUpcaster.decode(
                type: InspectionEventType.fieldSet.rawValue, schemaVersion: 1, payload: payload, template: nil)
        }
    }

    @Test(arguments: ["[", "{\"a\":"])
    func tenThousandNestedJSONLevelsAreAnError(opener: String) {
        let text = String(repeating: opener, count: 10_000)
        #expect(throws: DomainError.self) { try JSONValue(parsing: text) }
        #expect(throws: DomainError.self) { try Template(jsonText: text) }
    }

    @Test func aTemplateWhoseFormSchemaIsDeeplyNestedTextIsRefused() throws {
        let inner = String(repeating: "[", count: 10_000)
        let json = JSONValue.object([
            .init("id", .number("1")), .init("name", .string("x")), .init("version", .number("1")),
            .init("form_schema", .string(inner)),
        ])
        #expect(throws: DomainError.self) { try Template(json: json) }
    }

    @Test(arguments: ["99999999999999999999", "-9223372036854775809", "1e999999999"])
    func hugeNumbersInATemplateAreRefused(number: String) throws {
        let text = #"{"id": \#(number), "name": "x", "version": \#(number), "form_schema": []}"#
        #expect(throws: DomainError.self) { try Template(jsonText: text) }
    }
}
