import Foundation
import InspectionDomain
import InspectionUseCases
import LedgerCore
import SyncWorker
import Testing

/// `jqc history show`'s detail of a server record, from the record alone
/// (no server, no `jqc`): every line, what the server left out, the form's
/// answers in field order, the score's rounding and the JSON object.
@Suite struct ServerRecordDetailTests {
    static func record(_ json: String) throws -> ServerInspectionRecord {
        try ServerInspectionRecord(row: try JSONValue(parsing: json))
    }

    @Test func aFullRecordHasEveryLineAndItsAnswersInFieldOrder() throws {
        let record = try Self.record(
            """
            {"id": 42, "template_id": 11, "template_name": "Kitchen\\nhygiene", "facility_id": 101,
             "facility_name": "Cafe", "area_id": 7, "area_name": "Back", "inspector_name": "Dana",
             "completed_at": "2026-05-01T10:00:00Z", "overall_score": 48.456, "follow_up_required": true,
             "parent_inspection_id": 40, "form_data": {"10": "b", "2": "a", "notes": "n", "1": [1, 2]}}
            """)
        #expect(
            record.detailLines() == [
                "Server record 42",
                "  template:   \(TerminalText.singleLine("Kitchen\nhygiene")) (11)",
                "  facility:   Cafe (101), area Back (7)",
                "  inspector:  Dana",
                "  completed:  2026-05-01T10:00:00Z",
                "  score:      48.46",
                "  follow-up:  required: 'jqc start --reinspect 42' re-inspects it here",
                "  parent:     re-inspection of server record 40",
                "  form (4 answers):",
                "    1: [1,2]",
                "    2: \"a\"",
                "    10: \"b\"",
                "    notes: \"n\"",
            ])
        let json = record.detailJSON
        #expect(json["id"] == .string("42"))
        #expect(json["area_id"] == .string("7"))
        #expect(json["parent_id"] == .string("40"))
        #expect(json["follow_up_required"] == .bool(true))
        #expect(json["form_data"]?["2"] == .string("a"))
    }

    /// What the summary names by id only, named from this device's
    /// reference data; a time without a zone said as read (UTC); the
    /// server's own names win over the device's.
    @Test func namesKnownHereFillWhatTheServerLeftOut() throws {
        let record = try Self.record(
            """
            {"id": 6, "template_id": 11, "facility_id": 101, "facility_name": "Server's name", "area_id": 1001,
             "completed_at": "2026-05-01T10:00:00", "form_data": {"2": 4, "x": 1}}
            """)
        let names = ServerRecordNames(
            templateName: "Restroom QC", facilityName: "Device's name", areaName: "Lobby restrooms",
            fieldLabels: ["2": "Floors"])
        #expect(
            record.detailLines(names: names) == [
                "Server record 6",
                "  template:   Restroom QC (11)",
                "  facility:   Server's name (101), area Lobby restrooms (1001)",
                "  inspector:  —",
                "  completed:  2026-05-01T10:00:00 UTC (the server gave no zone; read as UTC)",
                "  score:      —",
                "  follow-up:  not required",
                "  parent:     —",
                "  form (2 answers):",
                "    2 \"Floors\": 4",
                "    x: 1",
            ])
    }

    @Test func whatTheServerLeftOutIsADash() throws {
        let record = try Self.record(#"{"id": 5, "template_id": 1, "facility_id": 2}"#)
        #expect(
            record.detailLines() == [
                "Server record 5", "  template:   — (1)", "  facility:   — (2)", "  inspector:  —",
                "  completed:  —", "  score:      —", "  follow-up:  not required", "  parent:     —",
                "  form:       not sent by the server",
            ])
        let json = record.detailJSON
        for key in ["template_name", "area_id", "overall_score", "parent_id", "form_data"] {
            #expect(json[key] == .null, "\(key)")
        }
    }

    @Test(arguments: [("52", "52"), ("48.0", "48"), ("48.5", "48.5"), ("48.456", "48.46"), ("\"high\"", "\"high\"")])
    func aScoreHasTwoDecimalsAtMost(_ sent: String, _ shown: String) throws {
        #expect(ServerInspectionRecord.scoreText(try JSONValue(parsing: sent)) == shown)
    }
}
