// libFuzzer target: `jqc verify --bundle`'s check of a proof bundle
// (`BundleCheck`: the strict reading by `JSONValue(parsing:)` and
// `StrictObject`, the signed note, the inclusion proofs, the records' CBOR)
// and the handover file's strict decoding (`jqc-handover/1`, `/2` and `/3`, its
// `carried_records` checked against the receptions' references, `/3`'s
// `carried_photo_files` by hash and order) and verification over the same
// input, the carried photo files among it (seeds:
// `corpus/bundle/seed-handover-2.json`, `seed-handover-3.json`).
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
import InspectionUseCases

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBundle(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let outcome = BundleCheck.check(bytes, pinned: nil, trusted: nil)
    precondition((0...2).contains(outcome.status) && !outcome.lines.isEmpty, "no verdict")
    if let file = try? HandoverFile(decoding: bytes) {
        _ = try? HandoverVerification.verify(file)
    }
    return 0
}
