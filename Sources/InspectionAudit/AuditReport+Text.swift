import FoundationEssentials
import InspectionDomain
import LedgerCore

/// The report as text for a terminal: the result first, then the facts, the
/// timeline, the form, issues, photos and sync.
///
/// Every text a person, a server or the ledger's keeper wrote (names,
/// labels, descriptions, ids read from the log, messages) is shown through
/// `TerminalText.singleLine` (`EventWording.shown`), and the whole report
/// through `TerminalText.safe`: a recorded escape sequence cannot rewrite or
/// hide a line of the report an auditor relies on.
extension AuditReport {
    /// The whole report as lines of text.
    public var text: String {
        var lines: [String] = []
        lines.append("AUDIT of inspection \(inspectionID.lowercased)")
        lines.append("RESULT: \(headline)")
        lines += chainLines.map { "  " + $0 }
        lines += photoSummaryLines.map { "  " + $0 }
        for problem in problems { lines.append("  ! \(shown(problem))") }
        for note in notes { lines.append("  note: \(shown(note))") }
        if let asOf {
            lines.append(
                "AS OF: \(asOf.requested) → position \(asOf.position), recorded \(asOf.recordedAt.iso8601); "
                    + "later events are left out")
        }
        lines.append("")
        lines += factLines
        lines.append("")
        lines.append("TIMELINE (\(timeline.entries.count) events; old → new for every answer changed)")
        for entry in timeline.entries { lines += timelineLines(entry) }
        lines.append("")
        lines.append(formTitle.uppercased())
        lines += formLines
        lines.append("")
        lines += issueLines
        lines += photoLines
        lines += syncLines
        return TerminalText.safe(lines.joined(separator: "\n"))
    }

    // MARK: - The top

    /// The verdict on the chain (and the digest), a line or two.
    public var chainLines: [String] {
        var lines: [String] = []
        if let proof = chain.proof {
            lines += proofLines(proof)
            if let witness = chain.witness { lines += witness.lines }
            return lines
        }
        switch chain.result {
        case .intact:
            lines.append(
                "chain: INTACT: \(chain.checked) records verified from position 1 to the head \(chain.head)"
                    + (chain.seconds.map { " in " + Self.duration($0) } ?? ""))
        case .notIntact(let finding):
            lines.append("chain: NOT INTACT: \(finding.message)")
            lines.append(
                "       \(provenUnchanged); recomputed head \(chain.head)")
        case .skipped:
            lines.append("chain: NOT VERIFIED (--no-verify); the stored head is \(chain.head)")
        }
        if let digest = chain.digest {
            let extends = chain.isIntact ? "extends" : "was checked against"
            lines.append("digest: the log \(extends) the digest \(digest)")
        } else if chain.isIntact {
            lines.append("digest: none given (pass --digest to prove nothing before it was rewritten)")
        }
        if let witness = chain.witness { lines += witness.lines }
        return lines
    }

    /// The verdict of the proofs: what was proven, how, and what was not.
    func proofLines(_ proof: ProofEvidence) -> [String] {
        var lines: [String] = []
        let timing = chain.seconds.map { " in " + Self.duration($0) } ?? ""
        switch chain.result {
        case .intact:
            lines.append(
                "chain: INTACT: the inspection's \(proof.proven.count) records proven through the Merkle tree of "
                    + "\(proof.treeSize) records (inclusion proofs, stream versions 1–\(proof.proven.count), back-links) "
                    + "against \(proof.anchorPhrase)\(timing)")
        case .notIntact(let finding):
            lines.append("chain: NOT INTACT: \(finding.message)")
            lines.append(
                "       \(proof.proven.count) of the inspection's \(proof.records) records proven before it, against "
                    + proof.anchorPhrase)
        case .skipped:
            break
        }
        lines.append("proofs: tree root \(proof.root); the head's chain link \(chain.head) was checked")
        lines.append("scope: \(ProofEvidence.scope)")
        return lines
    }

    var photoSummaryLines: [String] {
        let all = photos
        guard !all.isEmpty else { return ["photos: none captured"] }
        let bad = all.filter { $0.file.status != .matches && $0.file.status != .notChecked }
        if bad.isEmpty {
            return ["photos: all \(all.count) stored files match their recorded SHA-256"]
        }
        return ["photos: \(bad.count) of \(all.count) stored files MISSING or ALTERED"]
    }

    var factLines: [String] {
        var lines: [String] = []
        func fact(_ name: String, _ value: String) {
            lines.append(String((name + String(repeating: " ", count: 16)).prefix(16)) + value)
        }
        var status = form.status.rawValue
        if form.status == .discarded {
            status += " (hidden from every view; the log keeps it)"
            if let reason = form.discardReason { status += ": \(EventWording.quoted(reason))" }
        }
        fact("Status", status)
        if let found = template.template {
            fact("Template", "\(shown(found.id)) \"\(shown(found.name))\" version \(found.version)")
        } else {
            fact("Template", form.templateID.isEmpty ? "(unknown)" : shown(form.templateID) + " (not found in the log)")
        }
        fact("  content hash", template.hash + (template.hashMatches ? " (matches the pinned content)" : " (MISMATCH)"))
        fact("  pinned", template.source)
        fact(
            "Facility",
            "\(shown(form.facilityName)) (\(shown(form.facilityID)))"
                + (form.areaID.map { ", \(shown(form.areaName ?? "area")) (\(shown($0)))" } ?? ""))
        if let started = form.startedAt {
            fact("Started", "\(started.iso8601) by \(actorText(form.startedBy, device: form.startedOn))")
        }
        if let completed = form.completedAt {
            fact("Submitted", "\(completed.iso8601) by \(actorText(form.completedBy, device: form.completedOn))")
        }
        if let discarded = form.discardedAt { fact("Discarded", discarded.iso8601) }
        let score = form.score ?? scoreSoFar
        fact(
            "Score",
            (score.map { FixedPoint.text($0, places: 2) } ?? "none")
                + (form.status == .completed ? " (recorded at submit)" : " (so far)"))
        var followUp = form.followUpRequired ? "required" : "not required"
        if let resolved = form.followUpResolvedBy { followUp += ", cleared by re-inspection \(resolved.lowercased)" }
        fact("Follow-up", followUp)
        fact("Parent", parent.map(Self.linkText) ?? "none (not a re-inspection)")
        if children.isEmpty {
            fact("Re-inspections", "none")
        } else {
            for (i, child) in children.enumerated() { fact(i == 0 ? "Re-inspections" : "", Self.linkText(child)) }
        }
        let positions = timeline.entries.map(\.position).filter { $0 > 0 }
        if let first = positions.min(), let last = positions.max() {
            fact("Events", "\(timeline.entries.count), at positions \(first)–\(last) of the log")
        }
        return lines
    }

    /// `1.234 s`, or `0.42 ms` below a hundredth of a second.
    public static func duration(_ seconds: Double) -> String {
        seconds < 0.01 ? FixedPoint.text(seconds * 1000, places: 2) + " ms" : FixedPoint.text(seconds, places: 3) + " s"
    }

    static func linkText(_ link: LinkedInspection) -> String {
        var text = "\(link.id.lowercased) [\(link.status.rawValue)]"
        if let started = link.startedAt { text += " started \(started.iso8601)" }
        if let position = link.submittedPosition { text += ", submitted at position \(position)" }
        if let problem = link.problem { text += " — \(shown(problem))" }
        return text
    }

    static func actorText(_ actor: Actor?) -> String {
        guard let actor else { return "?" }
        return actor.verified ? shown(actor.name) : "\(shown(actor.name)) (unverified)"
    }

    // MARK: - Timeline

    func timelineLines(_ entry: TimelineEntry) -> [String] {
        let position = entry.position > 0 ? String(entry.position) : "-"
        let padded = String(repeating: " ", count: max(0, 7 - position.count)) + position
        var line = "\(padded)  "
        if let record = entry.record {
            line +=
                "\(record.recordedAt.iso8601)  \(String(record.device.lowercased.prefix(8)))  "
                + "\(actorText(record.actor, device: record.device)): "
        } else {
            line += "(v\(entry.streamVersion)) "
        }
        line += shown(entry.summary)
        if entry.hadNoEffect { line += "  [no effect on the record]" }
        if entry.recordedBeforePrevious { line += "  \(TimelineEntry.clockWentBack)" }
        if entry.position > 0, chain.standing(of: entry.position) == .failed { line += "  [FAILS THE CHAIN CHECK]" }
        if standing(of: entry) == .unproven { line += "  [UNPROVEN]" }
        var lines = [line]
        if !entry.summaryStatesChanges { lines += entry.changes.map { "           \(shown($0.text))" } }
        if let problem = entry.problem { lines.append("           ! \(shown(problem))") }
        return lines
    }

    // MARK: - Form and the rest

    var formLines: [String] {
        guard let template = form.template else { return ["  (the template is unknown, so the form cannot be drawn)"] }
        var lines: [String] = []
        let missing = Set(form.missingRequiredFields().map(\.id))
        for field in template.fields {
            switch field.type {
            case .section: lines.append("== \(shown(field.label))")
            case .label: lines.append("   \(shown(field.label))")
            default:
                let marker = missing.contains(field.id) ? "!" : (field.required ? "*" : " ")
                let value = form.values[field.id].map { EventWording.valueText($0) } ?? "—"
                lines.append(
                    " \(marker) [\(shown(field.id.rawValue))] \(shown(field.label)) (\(field.type.rawValue)): \(value)")
            }
        }
        lines += MergeReport(form).lines(sanitise: shown)
        return lines
    }

    var issueLines: [String] {
        guard !form.issues.isEmpty else { return ["ISSUES: none", ""] }
        var lines = ["ISSUES"]
        for issue in form.issues {
            var line = "  \(issue.id.lowercased) [\(issue.severity.rawValue)] \(shown(issue.description))"
            if let photo = issue.photoID { line += " (photo \(EventWording.short(photo)))" }
            line += " — flagged \(issue.flaggedAt.iso8601) by \(actorText(issue.flaggedBy, device: issue.stamp.device))"
            lines.append(line)
        }
        return lines + [""]
    }

    var photoLines: [String] {
        let all = photos
        guard !all.isEmpty else { return ["PHOTOS: none", ""] }
        var lines = ["PHOTOS (each stored file hashed again now)"]
        for photo in all {
            let reference = photo.captured.photo
            var place = ""
            if let field = photo.captured.fieldID {
                place = " for \(EventWording.fieldName(field, template: form.template))"
            }
            if let issue = photo.captured.issueID { place = " for issue \(EventWording.short(issue))" }
            let file: String =
                switch photo.file.status {
                case .matches: "file matches"
                case .missing: "FILE MISSING"
                case .altered(let actual): "FILE ALTERED (now hashes to \(actual))"
                case .notChecked: "file not checked"
                }
            lines.append(
                "  \(reference.photoID.lowercased) \(photo.captured.kind.rawValue)\(place), position \(photo.position)")
            lines.append(
                "      sha256 \(reference.sha256.hex), \(reference.size) bytes, \(shown(reference.mediaType)): \(file)"
                    + (photo.serverPath.map { "; uploaded to \(shown($0))" } ?? "")
                    + (photo.ignored ? "; captured after the record was final (no effect)" : ""))
        }
        return lines + [""]
    }

    var syncLines: [String] {
        var lines = ["SYNC: \(syncState)" + (form.sync.serverID.map { " (server id \(shown($0)))" } ?? "")]
        for note in form.syncNotes { lines.append("  \(TerminalText.singleLine(note))") }
        let outcomes = syncOutcomes
        if outcomes.isEmpty {
            lines.append("  no sync outcomes recorded")
        } else {
            for entry in outcomes {
                lines.append(
                    "  \(entry.position)  \(entry.record?.recordedAt.iso8601 ?? "")  \(shown(entry.summary))"
                        + (entry.recordedBeforePrevious ? "  \(TimelineEntry.clockWentBack)" : ""))
            }
        }
        return lines
    }
}

/// Person-written text for one line of the report (`EventWording.shown`).
private func shown(_ text: String) -> String { EventWording.shown(text) }
