import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore

/// `jqc service`: the background sync as a systemd user service (`SyncService`).
struct ServiceCommand: RunnableCommand {
    static let path = ["service"]
    static let spec = CommandSpec(
        "service", abstract: "Install, show or remove the background sync (a systemd user service).",
        discussion: """
            'jqc service install' writes \(SyncService.unitName) under $XDG_CONFIG_HOME/systemd/user (else \
            ~/.config/systemd/user), running 'jqc sync --daemon' on this ledger, and enables it through \
            'systemctl --user' when a user manager answers; without one it says what to run. The daemon sends \
            a submitted inspection within seconds, backs off while offline, waits through a refused session \
            until 'jqc login', and logs one line per outcome: 'journalctl --user -u \(SyncService.unitName)'.
            """,
        group: "Syncing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws { try ServiceStatusCommand.show(invocation) }
}

/// `jqc service install`.
struct ServiceInstallCommand: RunnableCommand {
    static let path = ["service", "install"]
    static let spec = CommandSpec(
        "install", abstract: "Write the user unit for this ledger and enable it (when a user manager answers).")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()  // a ledger must be there to sync
        let service = SyncService(environment: invocation.environment)
        let unit = SyncService.unit(executable: Self.executable(), ledger: invocation.home.path)
        try FileStore.makeDirectory(service.userUnitDirectory, mode: 0o755)
        try FileStore.writeAtomically(Data(unit.utf8), to: service.userUnitPath, mode: 0o644)
        let out = invocation.stdout
        let manager = service.hasUserManager
        if manager { try Self.enable(service) }
        if invocation.json {
            out.line(
                JSONOutput.render(
                    .object([
                        "unit": .string(service.userUnitPath), "ledger": .string(invocation.home.path),
                        "enabled": .bool(manager),
                    ])))
            return
        }
        out.line("Wrote \(service.userUnitPath) (jqc sync --daemon on \(invocation.home.path)).")
        guard manager else {
            out.line(
                "No systemd user manager answers here, so nothing was started. From your login session run:")
            out.line("  systemctl --user daemon-reload && systemctl --user enable --now \(SyncService.unitName)")
            out.line(
                "(to keep it running without a login: loginctl enable-linger $USER), or keep 'jqc sync --daemon' "
                    + "running yourself.")
            return
        }
        out.line("Enabled and started \(SyncService.unitName); it starts with your session from now on.")
        out.line("What it did: journalctl --user -u \(SyncService.unitName)   What is left: jqc status")
    }

    /// `systemctl --user daemon-reload`, then `enable --now` the unit.
    static func enable(_ service: SyncService) throws {
        for arguments in [["daemon-reload"], ["enable", "--now", SyncService.unitName]] {
            let answer = service.userManager(arguments)
            guard let answer, answer.status == 0 else {
                throw JQCError.refused(
                    "systemctl --user \(arguments.joined(separator: " ")) failed: "
                        + TerminalText.singleLine(answer?.output ?? "no answer")
                        + ". The unit is written; run that command yourself to see why.")
            }
        }
    }

    /// This jqc's own path (`/proc/self/exe`), so the unit runs the binary that installed it.
    static func executable() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 { return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments.first ?? "jqc"
    }
}

/// `jqc service status`.
struct ServiceStatusCommand: RunnableCommand {
    static let path = ["service", "status"]
    static let spec = CommandSpec("status", abstract: "Say whether the background sync is installed and running.")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws { try Self.show(invocation) }

    static func show(_ invocation: Invocation) throws {
        let service = SyncService(environment: invocation.environment)
        let state = service.state()
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "state": .string(state.word), "unit": .optional(state.unitPath),
                        "user_unit_path": .string(service.userUnitPath),
                    ])))
            return
        }
        invocation.stdout.line("\(SyncService.unitName): " + state.line)
    }
}

/// `jqc service uninstall`.
struct ServiceUninstallCommand: RunnableCommand {
    static let path = ["service", "uninstall"]
    static let spec = CommandSpec(
        "uninstall", abstract: "Stop and disable the user unit and remove its file (the ledger is not touched).")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let service = SyncService(environment: invocation.environment)
        let out = invocation.stdout
        let exists = FileManager.default.fileExists(atPath: service.userUnitPath)
        if service.hasUserManager {
            _ = service.userManager(["disable", "--now", SyncService.unitName])
        }
        if exists {
            guard unlink(service.userUnitPath) == 0 else {
                throw JQCError.io("removing \(service.userUnitPath)", errno)
            }
            if service.hasUserManager { _ = service.userManager(["daemon-reload"]) }
        }
        if invocation.json {
            out.line(JSONOutput.render(.object(["unit": .string(service.userUnitPath), "removed": .bool(exists)])))
            return
        }
        if exists {
            out.line("Removed \(service.userUnitPath); nothing syncs in the background any more ('jqc sync' by hand).")
        } else {
            out.line("\(service.userUnitPath) is not there; nothing was removed.")
        }
        if let shared = service.installedUnitPath {
            out.line(
                "\(shared) (from the package) remains for every user; 'systemctl --user disable --now "
                    + "\(SyncService.unitName)' keeps it from starting for you.")
        }
    }
}

/// `jqc service unit [--exec PATH]`: the unit as shipped, for `Tools/install` and the package.
struct ServiceUnitCommand: RunnableCommand {
    static let path = ["service", "unit"]
    static let exec = OptionSpec(
        "exec", valueName: "PATH", help: "The jqc the unit runs.", defaultDescription: "/usr/bin/jqc")
    static let spec = CommandSpec(
        "unit", abstract: "Print the user unit as packages ship it (the default ledger of each user).",
        options: [exec])

    var executable: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        executable = try parsed.value(of: Self.exec) ?? "/usr/bin/jqc"
        guard executable.hasPrefix("/") else {
            throw parsed.invalid(Self.exec, value: executable, reason: "expected an absolute path")
        }
    }

    func run(_ invocation: Invocation) throws {
        invocation.stdout.write(SyncService.unit(executable: executable, ledger: nil))
    }
}
