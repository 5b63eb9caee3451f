import Testing

@testable import InspectionDomain

/// The witness outcome as a type: each case records the schema's string,
/// and a string outside the schema is kept as it was recorded.
@Suite struct WitnessOutcomeTests {
    static let cases: [(DeviceStreamEvent.WitnessOutcome, String)] = [
        (.acknowledged, "acknowledged"), (.refused, "refused"), (.unsupported, "unsupported"),
        (.wrongAnswer, "wrong_answer"), (.unrecognized("postponed"), "postponed"),
    ]

    @Test(arguments: cases) func eachOutcomeIsRecordedAsItsSchemaString(
        outcome: DeviceStreamEvent.WitnessOutcome, recorded: String
    ) throws {
        #expect(outcome.rawValue == recorded)
        #expect(DeviceStreamEvent.WitnessOutcome(rawValue: recorded) == outcome)
        let event = DeviceStreamEvent.checkpointWitnessed(.init(outcome: outcome, server: "https://qc.example"))
        let decoded = try DeviceStreamEvent.decode(
            type: event.eventType.rawValue, schemaVersion: 1, payload: event.payloadCBOR())
        #expect(decoded == event)
    }
}
