// libFuzzer target: free-text redaction (`Redaction.text`), which every
// server message and transport error passes through before it is shown or
// recorded. Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
//
// The first byte picks how much is kept (0–255 scalars); the rest is the
// text, and a secret registered once is planted in it. Checks: it ends (the
// run's -timeout catches a scan that is not linear), the kept part is
// within its bound, and the secret never shows.
import HTTPCore

let secret = "fuzz-secret-7f3a9c"
let registered: Void = Redaction.hide(secret)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedaction(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    _ = registered
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let first = bytes.first else { return 0 }
    let limit = Int(first)
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    let middle = text.unicodeScalars.count / 2
    var planted = String.UnicodeScalarView(text.unicodeScalars.prefix(middle))
    planted.append(contentsOf: secret.unicodeScalars)
    planted.append(contentsOf: text.unicodeScalars.dropFirst(middle))
    for input in [text, String(planted)] {
        let printed = Redaction.text(input, keeping: limit)
        if printed.contains(secret) { fatalError("the secret shows in: \(printed)") }
        let kept =
            printed.unicodeScalars.split(separator: "…", maxSplits: 1, omittingEmptySubsequences: false).first.map(
                \.count) ?? 0
        // The original is cut after `limit` scalars; its redacted form
        // (placeholders are longer) after half as much again.
        if kept > limit + limit / 2 + 1 {
            fatalError("kept \(kept) scalars of a limit of \(limit): \(printed)")
        }
    }
    _ = Redaction.url(text)
    return 0
}
