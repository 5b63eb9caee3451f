import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// A witness configured at another URL than the sync server's: `jqc audit
/// --witness` asks that witness, never the sync server.
@Suite struct WitnessElsewhereTests {
    /// How many times `server` was asked for a device's latest checkpoint.
    static func latestAsked(_ server: DevServer) throws -> Int {
        guard case .object(let routes) = try server.stats()["requests"] else { return 0 }
        guard
            case .object(let statuses)? = routes.first(where: { $0.key.hasSuffix("/ledger/checkpoints/latest") })?.value
        else { return 0 }
        return statuses.compactMap { $0.value.integerValue }.reduce(0) { $0 + Int($1) }
    }

    @Test func auditWitnessAsksTheConfiguredWitnessNotTheSyncServer() throws {
        let server = try DevServer()
        let witness = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: witness.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 0, issues: 0).lowercased
        let audit = try sample.jqc("audit", id, "--witness")
        #expect(audit.status != 0)
        #expect(!audit.stderr.contains(server.baseURL), "\(audit.stderr)")
        #expect(try Self.latestAsked(witness) == 1)
        #expect(try Self.latestAsked(server) == 0)
    }
}
