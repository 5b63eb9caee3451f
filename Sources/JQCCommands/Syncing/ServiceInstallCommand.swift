import ArgumentParsing
import FoundationEssentials
import Glibc
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc service install`.
struct ServiceInstallCommand: CommandWithoutArguments {
    static let path = ["service", "install"]
    static let spec = CommandSpec(
        "install", abstract: "Write the user unit for this ledger and enable it (when a user manager answers).")

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()  // a ledger must be there to sync
        let service = SyncServiceUnit(environment: invocation.environment)
        let unit = try SyncServiceUnit.unit(executable: Self.executable(), ledger: invocation.home.path)
        try FileStore.makeDirectory(service.userUnitDirectory, mode: 0o755)
        try FileStore.writeAtomically(Data(unit.utf8), to: service.userUnitPath, mode: 0o644)
        let out = invocation.stdout
        let manager = service.hasUserManager
        if manager { try Self.enable(service) }
        if invocation.json {
            invocation.printJSON(
                .object([
                    "unit": .string(service.userUnitPath), "ledger": .string(invocation.home.path),
                    "enabled": .bool(manager),
                ]))
            return
        }
        out.line(
            "Wrote \(service.userUnitPath) (jqc sync --daemon on \(TerminalText.singleLine(invocation.home.path))).")
        guard manager else {
            out.line(
                "No systemd user manager answers here, so nothing was started. From your login session run:")
            out.line("  systemctl --user daemon-reload && systemctl --user enable --now \(SyncServiceUnit.unitName)")
            out.line(
                "(to keep it running without a login: loginctl enable-linger $USER), or keep 'jqc sync --daemon' "
                    + "running yourself.")
            return
        }
        out.line("Enabled and started \(SyncServiceUnit.unitName); it starts with your session from now on.")
        out.line("What it did: journalctl --user -u \(SyncServiceUnit.unitName)   What is left: jqc status")
    }

    /// `systemctl --user daemon-reload`, then `enable --now` the unit.
    static func enable(_ service: SyncServiceUnit) throws {
        for arguments in [["daemon-reload"], ["enable", "--now", SyncServiceUnit.unitName]] {
            let answer = service.userManager(arguments)
            guard let answer, answer.status == 0 else {
                throw JQCError.userManagerFailed(
                    arguments: arguments.joined(separator: " "),
                    output: TerminalText.singleLine(answer?.output ?? "no answer"))
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
