// libFuzzer target: an event payload through the domain's decoders (the
// first byte picks the event type and version, the rest is the payload).
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
import InspectionDomain
import LedgerCore

let template = Template(
    id: "11", name: "Fuzz", version: 1,
    fields: [
        TemplateField(id: "1", type: .text, label: "Notes"),
        TemplateField(id: "2", type: .number, label: "Count"),
        TemplateField(id: "3", type: .rating, label: "Rating"),
        TemplateField(id: "4", type: .table, label: "Table", columns: ["a", "b"]),
        TemplateField(id: "5", type: .checkboxGroup, label: "Group", options: ["x", "y"]),
        TemplateField(id: "6", type: .image, label: "Photo"),
        TemplateField(id: "7", type: .date, label: "Date"),
    ])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPayload(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let selector = bytes.first else { return 0 }
    let types = InspectionEventType.allCases
    let type = types[Int(selector & 0x7F) % types.count]
    // The high bit asks for version 1 (upcast where one exists).
    let version = selector & 0x80 == 0 ? type.schemaVersion : 1
    let payload = Array(bytes.dropFirst())
    if let event = try? EventUpcaster.decode(
        type: type.rawValue, schemaVersion: version, payload: payload, template: template)
    {
        _ = event.payloadCBOR()
        _ = event.payloadValue.encoded()
        _ = event.jsonObject.serialized()
    }
    for fieldType in FieldType.allCases {
        _ = try? FieldValue(cbor: CBORValue(decoding: payload), type: fieldType)
    }
    _ = try? Template(cbor: CBORValue(decoding: payload))
    return 0
}
