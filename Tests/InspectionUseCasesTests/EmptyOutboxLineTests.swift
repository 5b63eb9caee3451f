import Testing

@testable import InspectionUseCases

/// What `jqc outbox` says when it is empty (`SyncStanding.emptyOutboxLine`,
/// issue #33: the rule lives in the use case, the command prints it): never
/// "the server has everything" while a draft exists or with no server.
@Suite struct EmptyOutboxLineTests {
    static let cases: [(drafts: Int, serverConfigured: Bool, line: String)] = [
        (0, true, "The outbox is empty: the server has everything this device is to send."),
        (
            0, false,
            "The outbox is empty; no server is configured, so nothing has reached one ('jqc config set server URL'). "
                + "'jqc status' lists copies another device is expected to send."
        ),
        (
            1, true,
            "The outbox is empty, but 1 draft is only on this device: nothing of an inspection is sent before "
                + "'jqc submit ID' ('jqc status' counts what is not on the server)."
        ),
        (
            3, false,
            "The outbox is empty, but 3 drafts are only on this device: nothing of an inspection is sent before "
                + "'jqc submit ID' ('jqc status' counts what is not on the server)."
        ),
    ]

    @Test(arguments: cases)
    func anEmptyOutboxSaysWhatReachedTheServer(drafts: Int, serverConfigured: Bool, line: String) {
        #expect(SyncStanding.emptyOutboxLine(drafts: drafts, serverConfigured: serverConfigured) == line)
    }
}
