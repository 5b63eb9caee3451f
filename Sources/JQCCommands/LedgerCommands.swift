import ArgumentParsing
import Foundation
import InspectionDomain
import LedgerCore
import LedgerStore

// MARK: - init

/// `jqc init`: creates the ledger directory, its store and its device id.
struct InitCommand: RunnableCommand {
    static let path = ["init"]
    static let spec = CommandSpec(
        "init", abstract: "Create a ledger (the directory, the event log and this device's id).",
        discussion: "The server URL can be given now or later; nothing here needs the network.",
        group: "Setup",
        options: [
            OptionSpec("server", valueName: "URL", help: "The server's API base URL, e.g. https://jqc.example/api/v1."),
            OptionSpec("ca-bundle", valueName: "FILE", help: "A CA bundle to trust for the server (PEM)."),
        ])

    var server: String?
    var caBundle: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        server = parsed.option("server")
        caBundle = parsed.option("ca-bundle")
        if let server, !(server.hasPrefix("https://") || server.hasPrefix("http://")) {
            throw .invalidValue(
                option: "server", value: server, reason: "expected an http:// or https:// URL",
                context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let home = invocation.home
        if home.exists { throw JQCError.ledgerExists(home.path) }
        let files = FileManager.default
        if files.fileExists(atPath: home.storePath + "/data.mdb") {
            throw JQCError.refused(
                "\(home.storePath) already holds a store but \(home.configPath) is missing; nothing was changed. "
                    + "Restore config.json from a backup, or move the store away to start a new ledger.")
        }
        // Only `init` creates: whatever this run made is removed if it fails
        // (a full disk), so no half-made ledger is left to be mistaken for one.
        let made = [home.path, home.photosPath, home.storePath].filter { !files.fileExists(atPath: $0) }
        let config = LedgerConfig(
            deviceID: UUID(), serverURL: server, caBundle: caBundle, createdAt: invocation.clock.now())
        do {
            try FileStore.makeDirectory(home.path)
            try FileStore.makeDirectory(home.photosPath)
            try EventLog(directory: home.storePath).close()
            try config.save(home)
        } catch {
            for path in made.reversed() { try? files.removeItem(atPath: path) }
            if !made.contains(home.path) { unlink(home.configPath) }
            if case let failure as DurableFileError = error, failure.code == ENOSPC || failure.code == EDQUOT {
                throw LedgerError.noSpace(path: home.path, freeBytes: LedgerError.freeSpace(at: home.path))
            }
            if case LedgerError.noSpace = error {
                throw LedgerError.noSpace(path: home.path, freeBytes: LedgerError.freeSpace(at: home.path))
            }
            throw error
        }
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "ledger": .string(home.path), "device_id": .string(config.deviceID.lowercased),
                        "server_url": .optional(config.serverURL),
                    ])))
        } else {
            invocation.stdout.line("Created a ledger at \(home.path)")
            invocation.stdout.line("Device id \(config.deviceID.lowercased)")
            if let server { invocation.stdout.line("Server \(server)") }
        }
    }
}

// MARK: - verify

/// `jqc verify`: recomputes the whole hash chain.
struct VerifyCommand: RunnableCommand {
    static let path = ["verify"]
    static let spec = CommandSpec(
        "verify", abstract: "Check the whole log: every hash recomputed, nothing changed, removed or reordered.",
        discussion: """
            With --digest, also prove that the log still extends a digest handed out earlier \
            (by 'jqc digest'). Exit status 1 when anything is wrong.
            """,
        group: "Auditing",
        options: [OptionSpec("digest", valueName: "DIGEST", help: "A digest from 'jqc digest' to check against.")])

    var digest: LedgerDigest?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        if let text = parsed.option("digest") {
            guard let digest = LedgerDigest(text) else {
                throw .invalidValue(
                    option: "digest", value: text, reason: "expected jqc-digest-v1:<position>:<64 hex digits>",
                    context: parsed.context)
            }
            self.digest = digest
        }
    }

    func run(_ invocation: Invocation) throws {
        // Read-only and without a session: an auditor verifies a copy.
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let report = try auditor.log.verify(against: digest) { done, total in
            invocation.progress("verifying \(done)/\(total)")
        }
        invocation.endProgress()
        if invocation.json {
            let finding: JSONValue =
                report.finding.map {
                    .object(["position": .integer($0.position), "message": .string($0.description)])
                } ?? .null
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "intact": .bool(report.isIntact), "checked": .integer(report.checked),
                        "head": .string(report.head.description), "digest": .optional(report.digest?.description),
                        "finding": finding,
                    ])))
        } else if report.isIntact {
            invocation.stdout.line("intact: \(report.checked) records verified, chain head \(report.head)")
            if let digest { invocation.stdout.line("extends the digest \(digest)") }
        }
        if let finding = report.finding {
            throw JQCError.verificationFailed("NOT INTACT: \(finding)")
        }
    }
}

// MARK: - digest

/// `jqc digest`: the current head, to hand to someone who will check later.
struct DigestCommand: RunnableCommand {
    static let path = ["digest"]
    static let spec = CommandSpec(
        "digest", abstract: "Print the log's digest (position and chain hash) to check it against later.",
        group: "Auditing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let head = try auditor.log.head()
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(head))
        } else {
            invocation.stdout.line(head.description)
        }
    }
}
