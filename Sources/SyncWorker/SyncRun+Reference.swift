import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore

extension SyncRun {
    // MARK: - Reference data

    func pullReferenceData(_ report: inout SyncReport) throws {
        let pulled: ReferencePull
        do {
            pulled = try ReferencePull.fetch(session)
        } catch .loginRequired(let message) {
            report.stop = .loginRequired(APIError.loginRequired(message).description)
            report.sessionRefusedBecause = APIError.loginRequired(message).serverMessage
            return
        } catch .transport(.stopped) {
            report.stop = .interrupted
            return
        } catch .transport(.couldNotConnect(let detail)) {
            report.stop = .serverUnreachable(
                "The server could not be reached, so reference data was not refreshed: "
                    + "\(TransportError.couldNotConnect(detail: detail).description)")
            return
        } catch {
            report.reference = .failed(error.description)
            return
        }
        do {
            try ledger.replaceReference(with: pulled.snapshot, skipped: pulled.warnings, at: clock.now())
        } catch let refusal as ReferenceDataError {
            report.reference = .failed(refusal.description)
            report.referenceWarnings = pulled.warnings
            return
        }
        report.reference = .refreshed(
            facilities: pulled.snapshot.facilities.count, templates: pulled.snapshot.templates.count)
        report.referenceWarnings = pulled.warnings
    }
}
