// libFuzzer target: the JSON parser (server answers, `pull --from` files,
// `set --json` values) and what reads templates and field values from it.
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
import InspectionDomain

let fields: [TemplateField] = FieldType.allCases.map { type in
    TemplateField(
        id: FieldID(rawValue: type.rawValue), type: type, label: type.rawValue,
        options: type.offersOptions ? ["Pass", "Fail"] : nil, columns: type == .table ? ["a", "b"] : nil)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    // As the bundle tools read (repeated names kept, a lone surrogate
    // U+FFFD): what was read writes out and reads back to the same text.
    if let kept = try? JSONValue(parsing: bytes, .asTheBundleToolsRead) {
        let text = kept.serialized()
        guard let again = try? JSONValue(parsing: Array(text.utf8), .asTheBundleToolsRead), again.serialized() == text
        else { fatalError("JSON read as the bundle tools read did not round-trip: \(text)") }
    }
    guard let value = try? JSONValue(parsing: bytes) else { return 0 }
    // What was parsed writes out and parses back to the same value.
    let text = value.serialized()
    guard let again = try? JSONValue(parsing: text), again == value else {
        fatalError("JSON did not round-trip: \(text)")
    }
    _ = try? Template(json: value)
    _ = try? Template.list(json: value)
    _ = value.integerValue
    _ = value.doubleValue
    for field in fields {
        _ = try? FieldValue(json: value, for: field)
        if let string = value.stringValue { _ = try? FieldValue.parse(string, for: field) }
    }
    return 0
}
