import Foundation

/// `jqc` commands end to end, process start included, on the generated
/// ledger: the wall time an inspector or auditor waits.
struct CommandBenchmark {
    var ledger: String
    var inspection: UUID

    /// Average wall seconds of `runs` runs of `jqc arguments`.
    func time(_ arguments: [String], runs: Int) throws -> Double {
        let jqc = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "jqc")
        var total = 0.0
        for _ in 0..<runs {
            let process = Process()
            process.executableURL = jqc
            process.arguments = ["--ledger", ledger, "--as", "bench"] + arguments
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            total += try Measure.seconds {
                try process.run()
                process.waitUntilExit()
            }
            guard process.terminationStatus == 0 || arguments.first == "audit" else {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw BenchError("jqc \(arguments.joined(separator: " ")) failed: \(message)")
            }
        }
        return total / Double(runs)
    }

    func run() throws {
        // A draft to edit: inspections in the generated ledger are all submitted.
        let started = Process()
        started.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("jqc")
        started.arguments = ["--ledger", ledger, "--as", "bench", "--json", "start", "-t", "11", "-f", "101"]
        let out = Pipe()
        started.standardOutput = out
        try started.run()
        started.waitUntilExit()
        let object = try JSONSerialization.jsonObject(with: out.fileHandleForReading.readDataToEndOfFile())
        guard let draft = (object as? [String: Any])?["id"] as? String else {
            throw BenchError("could not start a draft")
        }

        let baseline = try time(["--version"], runs: 20)
        let set = try time(["set", draft, "Notes", "benchmark note"], runs: 30)
        let show = try time(["show", String(draft.prefix(8))], runs: 20)
        print("== jqc end to end (wall, process start included; 1 M-event ledger)")
        print(String(format: "  jqc --version (process start only)  %7.2f ms", baseline * 1000))
        print(String(format: "  jqc set ID FIELD VALUE              %7.2f ms   target < 15 ms", set * 1000))
        print(String(format: "  jqc show ID                         %7.2f ms", show * 1000))
        if (try? time(["help", "audit"], runs: 1)) != nil {
            let audit = try time(["audit", inspection.lowercased], runs: 10)
            print(String(format: "  jqc audit ID (verifies the chain)   %7.2f ms   target < 50 ms", audit * 1000))
        }
    }
}
