import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Where a rebuild's time goes: reading, decoding records, decoding
/// payloads, folding — each measured alone over the same log.
struct FoldProfile {
    var store: String

    func run() throws {
        let log = try EventLog(directory: store)
        var records: [EventRecord] = []
        let tRead = try Measure.seconds {
            try log.read { reader in
                try reader.forEachRecord { record in
                    records.append(record)
                    return true
                }
            }
        }
        var events: [InspectionEvent] = []
        events.reserveCapacity(records.count)
        let tDecode = try Measure.seconds {
            for record in records { events.append(try InspectionEvent.decode(record)) }
        }
        var states: [UUID: InspectionState] = [:]
        var templates: [String: Template] = [:]
        let tApply = Measure.seconds {
            for (record, event) in zip(records, events) {
                if case .templatePinned(let pin) = event { templates[pin.templateHash] = pin.template }
                states[record.stream, default: InspectionState(id: record.stream)].apply(
                    event, recordedAt: record.recordedAt, actor: record.actor, pinnedTemplates: templates)
            }
        }
        let n = Double(records.count)
        print(
            String(
                format: "  read+record decode %.0fk/s, payload decode %.0fk/s, apply %.0fk/s (%d states)",
                n / tRead / 1000, n / tDecode / 1000, n / tApply / 1000, states.count))
        log.close()
    }
}
