import Foundation
import LedgerTestSupport
import Synchronization
import Testing

@testable import LedgerStore

/// The jqc binary's own child processes, files and threads (it links only
/// FoundationEssentials, which has no `Process`, `FileHandle` or `Thread`).
@Suite struct ProcessStandInTests {
    @Test func aChildsOutputAndErrorsAreCapturedApart() throws {
        // More than a pipe holds on both streams: neither may fill and stall the child.
        let script = "head -c 200000 /dev/zero | tr '\\0' o; head -c 150000 /dev/zero | tr '\\0' e >&2; exit 3"
        let ending = try ChildProcess.run("/bin/sh", arguments: ["-c", script], output: .captured)
        #expect(ending.status == 3 && ending.signal == nil && !ending.succeeded)
        #expect(ending.output.count == 200_000 && ending.output.allSatisfy { $0 == UInt8(ascii: "o") })
        #expect(ending.errors.count == 150_000 && ending.errors.allSatisfy { $0 == UInt8(ascii: "e") })
    }

    @Test func capturedTogetherKeepsTheOrderWritten() throws {
        let ending = try ChildProcess.run(
            "/bin/sh", arguments: ["-c", "echo one; echo two >&2; echo three"], output: .capturedTogether)
        #expect(ending.succeeded && ending.errors.isEmpty)
        #expect(String(decoding: ending.output, as: UTF8.self) == "one\ntwo\nthree\n")
    }

    @Test func theEnvironmentGivenIsTheChildsWhole() throws {
        let ending = try ChildProcess.run(
            "/usr/bin/env", arguments: [], environment: ["ONLY": "this one", "B": "=x"], output: .captured)
        let lines = Set(String(decoding: ending.output, as: UTF8.self).split(separator: "\n"))
        #expect(lines == ["ONLY=this one", "B==x"])
    }

    /// A child starts with every signal at its default, whatever this
    /// process ignores (jqc ignores SIGPIPE).
    @Test func aChildStartsWithSignalsAtTheirDefaults() throws {
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let ending = try ChildProcess.run(
            "/bin/sh", arguments: ["-c", "grep -E '^(SigIgn|SigBlk):' /proc/self/status"], output: .captured)
        let masks = Dictionary(
            uniqueKeysWithValues: String(decoding: ending.output, as: UTF8.self).split(separator: "\n").map {
                line in
                let parts = line.split(separator: ":")
                return (String(parts[0]), UInt64(parts[1].trimmingCharacters(in: .whitespaces), radix: 16))
            })
        #expect(masks["SigBlk"] == 0, "\(masks)")
        // Signal n is bit n - 1; glibc's own 32 and 33 stay as glibc sets them.
        let ignored = try #require(masks["SigIgn"] ?? nil)
        #expect(ignored & (1 << (SIGPIPE - 1)) == 0 && ignored & 0x7FFF_FFFF == 0, "\(masks)")
    }

    @Test func standardInputIsEmptyUnlessInherited() throws {
        let ending = try ChildProcess.run("/bin/cat", arguments: [], output: .captured)
        #expect(ending.succeeded && ending.output.isEmpty)
    }

    @Test func aSignalIsToldApartFromAStatus() throws {
        let ending = try ChildProcess.run("/bin/sh", arguments: ["-c", "kill -9 $$"], output: .captured)
        #expect(ending.status == nil && ending.signal == 9 && !ending.succeeded)
    }

    @Test(arguments: ["/nonexistent/program", "/etc/passwd"])
    func aProgramThatCannotStartIsAnError(path: String) {
        #expect(throws: ChildProcessError.self) {
            try ChildProcess.run(path, arguments: [], output: .captured)
        }
    }

    @Test func anOpenFileReadsWritesAndSaysWhatFailed() throws {
        let directory = TemporaryDirectory(prefix: "open-file")
        let path = directory.appending("f")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("abc".utf8)))
        let appending = try OpenFile(appendingTo: path)
        try appending.write(Array(repeating: UInt8(ascii: "d"), count: 100_000))
        try appending.write("e")
        try appending.close()
        try appending.close()  // a second close does nothing
        let reading = try OpenFile(reading: path)
        #expect(try reading.read(upTo: 3) == Array("abc".utf8))
        let rest = try reading.readToEnd()
        #expect(rest.count == 100_001 && rest.last == UInt8(ascii: "e"))
        #expect(try reading.read(upTo: 10).isEmpty)
        let missing = directory.appending("missing")
        #expect {
            _ = try OpenFile(reading: missing)
        } throws: { error in
            (error as? OpenFileError)?.description == "opening \(missing) failed: No such file or directory"
        }
        #expect(throws: OpenFileError.self) { _ = try OpenFile(appendingTo: missing) }
    }

    @Test func detachedThreadsRunAndAreNamed() throws {
        let seen = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let names = ["jqc.t0", "jqc.t1", "jqc.t2", "jqc.a.name.longer.than.the.kernel.keeps"]
        for name in names {
            try DetachedThread.start(named: name) {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                seen.withLock { $0.append(comm.trimmingCharacters(in: .newlines)) }
                done.signal()
            }
        }
        for _ in names { done.wait() }
        // The kernel keeps a name's first 15 bytes.
        #expect(Set(seen.withLock { $0 }) == ["jqc.t0", "jqc.t1", "jqc.t2", "jqc.a.name.long"])
    }
}
