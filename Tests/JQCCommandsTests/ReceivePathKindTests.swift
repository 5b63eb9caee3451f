import Foundation
import LedgerTestSupport
import Testing

/// `jqc receive` judges the path it is given by its kind and size before
/// opening it: a directory, a FIFO, a socket or a device, and a file larger
/// than a handover file may be, are refused in words (never a Foundation
/// error string) with nothing read or recorded; a FIFO nobody writes to does
/// not make it wait.
@Suite struct ReceivePathKindTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try #require(try jqc("init").status == 0)
    }

    /// A path that is not a handover file, and what `receive` says of it.
    enum NotAFile: String, CaseIterable, Sendable {
        case directory, fifo, socket, device, linkToDirectory, danglingLink, missing, sparseOverTheLimit

        /// The path, made in `directory`.
        func make(in directory: TemporaryDirectory) throws -> String {
            let path = directory.appending(rawValue)
            switch self {
            case .directory: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .fifo: #expect(mkfifo(path, 0o600) == 0)
            case .socket:
                let made = try ProcessRun.run(
                    Products.python.executable,
                    Products.python.arguments + [
                        "-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path,
                    ])
                #expect(made.status == 0, "\(made.stderr)")
            case .device: return "/dev/zero"
            case .linkToDirectory:
                try FileManager.default.createDirectory(
                    atPath: path + "-target", withIntermediateDirectories: false)
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + "-target")
            case .danglingLink:
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + "-nowhere")
            case .missing: break
            case .sparseOverTheLimit:
                // 2 GiB that take no disk: refused by its size, never read.
                let made = try ProcessRun.run("/usr/bin/env", ["truncate", "-s", "2G", path])
                #expect(made.status == 0, "\(made.stderr)")
            }
            return path
        }

        var says: String {
            switch self {
            case .directory, .linkToDirectory: "is a directory, not a handover file"
            case .fifo: "is a FIFO (a named pipe) or another special file, not a handover file"
            case .socket: "is a socket, not a handover file"
            case .device: "is a device, not a handover file"
            case .danglingLink: "is a symbolic link to nothing (its target does not exist)"
            case .missing: "does not exist; nothing was read or recorded. Check the path."
            case .sparseOverTheLimit:
                "is 2048 MiB (2147483648 bytes), larger than the 1024 MiB a handover file may be"
            }
        }
    }

    @Test(arguments: NotAFile.allCases)
    func aPathThatIsNoHandoverFileIsRefusedByItsKind(path kind: NotAFile) throws {
        let path = try kind.make(in: directory)
        let before = try jqc("--json", "log").stdout
        // A watchdog, not a timing: a receive that opened the FIFO would wait for ever.
        let result = try ProcessRun.run(
            Products.executable("jqc"), ["--as", "Dana", "receive", path], environment: jqc.environment,
            timeout: 60)
        #expect(!result.signalled, "jqc receive \(kind) did not return")
        #expect(result.status == 1)
        #expect(result.stderr.contains("UNREADABLE: \(path) \(kind.says)"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was read or recorded"), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("operation could not"))
        #expect(try jqc("--json", "log").stdout == before, "receive recorded something")
    }
}
