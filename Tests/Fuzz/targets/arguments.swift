// libFuzzer target: the argument parser over a spec shaped like jqc's
// (Tests/ArgumentParsingTests/SampleProgram.swift). NUL bytes separate the
// arguments; the first byte is the help width.
// Built by Tools/fuzz, not by SwiftPM (see Tests/Fuzz/README.md).
import ArgumentParsing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let width = bytes.first else { return 0 }
    let arguments = bytes.dropFirst().split(separator: 0, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    let spec = SampleProgram.spec
    do {
        switch try spec.parse(arguments) {
        case .help(let path):
            _ = try spec.help(for: path, width: Int(width))
            _ = try spec.usage(for: path)
        case .command(let command):
            for option in [SampleProgram.Log.limit, SampleProgram.Start.template, SampleProgram.Flag.severity] {
                _ = try? command.integer(of: option)
            }
        default:
            break
        }
    } catch {
        _ = error.description
        _ = error.message
    }
    return 0
}
