// libFuzzer target: reference data as `jqc pull --from FILE` and a pull
// read it (`{"facilities": [...], "templates": [...]}`).
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
import InspectionDomain
import InspectionStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReference(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let json = try? JSONValue(parsing: bytes) else { return 0 }
    if let snapshot = try? ReferenceCache.Snapshot(json: json) {
        for facility in snapshot.facilities { _ = facility.jsonValue.serialized() }
        for template in snapshot.templates {
            _ = template.contentHash
            _ = try? Template(cbor: template.canonicalCBOR)
        }
    }
    _ = try? Facility(json: json)
    return 0
}
