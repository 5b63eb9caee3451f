import Glibc

/// A number written with a fixed count of decimals, rounded as C's `printf`
/// rounds it (`%.2f`): what `String(format:)` gave, which the jqc binary
/// cannot use since it links only FoundationEssentials.
public enum FixedPoint {
    /// `value` with `places` decimals, e.g. `text(0.125, places: 2)` is "0.12"
    /// (the binary value just below a half), `text(2, places: 3)` is "2.000".
    public static func text(_ value: Double, places: Int) -> String {
        precondition((0...17).contains(places), "decimals out of range: \(places)")
        // Room for any double's digits (up to 309 before the point) and the sign.
        var buffer = [CChar](repeating: 0, count: 340)
        let written = withVaList([Int32(places), value]) { arguments in
            buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, "%.*f", arguments) }
        }
        precondition(written >= 0 && written < buffer.count, "vsnprintf wrote \(written) bytes")
        return String(decoding: buffer[..<Int(written)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
