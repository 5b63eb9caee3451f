// libFuzzer target: a stored record as `jqc verify`, `log` and `audit` read it.
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
import LedgerCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    // The store keeps a 32-byte chain hash in front of each record.
    for offset in [0, 32] {
        _ = try? EventRecord.position(ofEncoded: bytes, at: offset)
        // What a partition of a rebuild reads of another's records.
        _ = try? EventRecord.route(
            ofEncoded: bytes.span.bytes, at: offset, sharedTypes: [Array("template.pinned".utf8), []])
        _ = try? EventRecord.header(ofEncoded: bytes.span.bytes, at: offset)
        if let record = try? EventRecord(decoding: bytes, at: offset) {
            _ = record.recordedAt.iso8601
            _ = record.encoded()
        }
    }
    _ = try? CBORValue(decoding: bytes).encoded()
    var reader = CBORReader(bytes)
    while !reader.isAtEnd, (try? reader.skipItem()) != nil {}
    return 0
}
