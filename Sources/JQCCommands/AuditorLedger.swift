import Foundation
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

// MARK: - Opening a ledger the way an auditor does

/// A ledger opened read-only, without a session or the network: the
/// device's own ledger, or a copy handed to an auditor (possibly on a
/// read-only medium, or a directory made read-only with `chmod -R a-w`;
/// see `ReadOnlyOpening`). Everything it reads goes through the store's
/// own types: it never names a table.
final class AuditorLedger {
    let home: LedgerHome
    let log: EventLog
    /// The whole ledger (views, reference data), when its tables exist: a
    /// ledger that was only `init`ed has none yet.
    let ledger: InspectionLedger?
    let photos: PhotoStore
    /// Whether the lock file had to be skipped.
    let withoutLock: Bool

    private init(home: LedgerHome, log: EventLog, ledger: InspectionLedger?, withoutLock: Bool) {
        self.home = home
        self.log = log
        self.ledger = ledger
        self.photos = PhotoStore(directory: home.photosPath)
        self.withoutLock = withoutLock
    }

    deinit { close() }

    func close() {
        // The ledger owns the log when there is one.
        if let ledger { ledger.close() } else { log.close() }
    }

    /// Opens `home` read-only; with `views`, also the inspection views (for
    /// pinned templates and re-inspection links).
    static func open(_ home: LedgerHome, views: Bool) throws -> AuditorLedger {
        try home.checkReadable()
        guard home.exists else { throw JQCError.noLedger(home.path) }
        if views {
            do {
                let (ledger, withoutLock) = try InspectionLedger.openForReading(
                    storePath: home.storePath, photosPath: home.photosPath)
                return AuditorLedger(home: home, log: ledger.log, ledger: ledger, withoutLock: withoutLock)
            } catch LedgerError.noLedger {
                // The log exists but its views were never made: audit from the log alone.
            }
        }
        let (log, withoutLock) = try ReadOnlyOpening.log(directory: home.storePath)
        return AuditorLedger(home: home, log: log, ledger: nil, withoutLock: withoutLock)
    }

    // MARK: - Reading streams without trusting them

    /// The inspection's stream read through the stream index (never by
    /// scanning the log), keeping every hole.
    func history(of id: UUID) throws -> [StreamEntry] {
        try log.history(ofStream: id)
    }

    /// The inspection a person named by an id or any unique prefix of it
    /// (one hex digit included), found in the log's own stream index (not in
    /// a view), so discarded drafts and inspections whose views are damaged
    /// are found too.
    func resolveInspection(_ reference: String) throws -> UUID {
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let matches = try log.streams(matching: prefix)
        switch matches.count {
        case 0:
            throw JQCError.notFound(
                kind: "inspection", reference: reference,
                hint: "No stream of this ledger's log has that id. 'jqc log' lists every event, discarded drafts "
                    + "included.")
        case 1: return matches[0]
        default: throw LookupError.ambiguous(reference, matches)
        }
    }

    // MARK: - What lies outside the stream

    /// Where the template an inspection pinned was found.
    struct FoundTemplate {
        var template: Template
        var pinnedAt: UInt64?
        var source: String
    }

    /// The re-inspections and the pinned template of an inspection, from the
    /// views when they are up to date (each answer is checked: a template by
    /// its content hash, a child by its own stream), else by one scan of the
    /// log. The notes say how they were found and what could not be read.
    func links(of id: UUID, templateHash: String?) throws -> (
        template: FoundTemplate?, children: [UUID], notes: [String]
    ) {
        if let ledger, try ledger.views.staleProjections().isEmpty {
            let children = try ledger.reinspections(of: id)
            guard let templateHash else { return (nil, children, []) }
            // The views keep the template, not where it was pinned: find the pin itself.
            let viewed = try ledger.pinnedTemplate(hash: templateHash)
            let scanned = try InspectionLinks.scan(log, templateHash: templateHash, parent: nil)
            let notes = Self.notes(for: scanned.unread)
            if let pin = scanned.template {
                return (
                    FoundTemplate(
                        template: pin.template, pinnedAt: pin.position,
                        source: "by an earlier inspection at position \(pin.position); its content hashes to the "
                            + "recorded value"),
                    children, notes
                )
            }
            if let viewed, viewed.contentHash == templateHash {
                return (
                    FoundTemplate(
                        template: viewed, pinnedAt: nil,
                        source: "in the templates view only (no pin of it is readable in the log); its content "
                            + "hashes to the recorded value"),
                    children, notes
                )
            }
            return (nil, children, notes)
        }
        let scanned = try InspectionLinks.scan(log, templateHash: templateHash, parent: id)
        let template = scanned.template.map {
            FoundTemplate(
                template: $0.template, pinnedAt: $0.position,
                source: "at position \($0.position) (found by scanning the log)")
        }
        return (
            template, scanned.children,
            [
                "the views are missing or out of date, so the template and re-inspections were found by scanning "
                    + "the log"
            ] + Self.notes(for: scanned.unread)
        )
    }

    /// Records the link scan could not read: each could have been the pin or
    /// a re-inspection, so the report says so rather than skipping them.
    private static func notes(for unread: [InspectionLinks.Unread]) -> [String] {
        unread.map {
            "while looking for the template and re-inspections, \($0) (a link there would be missing from this "
                + "report; 'jqc verify' checks the record)"
        }
    }

    // MARK: - The chain

    /// Walks the whole chain (the one full scan of an audit) and states the
    /// result without the store's types, with how long it took.
    func checkChain(against digest: LedgerDigest?, progress: @escaping (UInt64, UInt64) -> Void) throws -> ChainCheck {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let report = try log.verify(against: digest, progress: progress)
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        guard let finding = report.finding else {
            return ChainCheck(
                result: .intact, checked: report.checked, head: report.head, digest: digest,
                verifiedThrough: report.checked, seconds: seconds)
        }
        let (kind, verifiedThrough): (String, UInt64) =
            switch finding {
            case .changed(let p): ("changed", p - 1)
            case .missing(let p, _): ("missing", p - 1)
            case .reordered(let p, _): ("reordered", p - 1)
            case .unreadable(let p, _): ("unreadable", p - 1)
            case .brokenStreamLink(let p, _, _): ("broken_stream_link", p - 1)
            case .truncated(_, let found): ("truncated", found)
            // Every record up to the digest's position is in doubt: one of them differs.
            case .digestMismatch: ("digest_mismatch", 0)
            // The chain itself was walked to its end.
            case .indexMismatch: ("index_mismatch", report.checked)
            }
        return ChainCheck(
            result: .notIntact(.init(kind: kind, position: finding.position, message: finding.description)),
            checked: report.checked, head: report.head, digest: digest, verifiedThrough: verifiedThrough,
            seconds: seconds)
    }

    /// The chain left unchecked (`--no-verify`), with the stored head.
    func uncheckedChain() throws -> ChainCheck {
        ChainCheck(result: .skipped, checked: 0, head: try log.head(), digest: nil, verifiedThrough: 0, seconds: nil)
    }
}

extension Invocation {
    /// The ledger opened read-only for an auditor (see `AuditorLedger`).
    func auditorLedger(views: Bool = true) throws -> AuditorLedger {
        try openingStore { try AuditorLedger.open(home, views: views) }
    }
}

extension LedgerHome {
    /// Fails with "permission denied" when the ledger exists but this user
    /// may not read it: otherwise an unreadable directory looks like no
    /// ledger at all.
    func checkReadable() throws {
        try ReadOnlyOpening.checkReadable([path, configPath, storePath, storePath + "/data.mdb"])
    }
}
