import FoundationEssentials
import InspectionDomain
import LedgerCore

/// The report as one self-contained HTML file an auditor opens in any
/// browser, offline: inline CSS, no script at all, photos embedded as
/// `data:` URIs beside their hashes, and a Content-Security-Policy that
/// forbids every fetch, so opening it never touches the network.
///
/// Each photo is embedded once: in the form's grid when it is the current
/// value of an image or signature field, otherwise in the photo list (which
/// links to the grid for the others).
extension AuditReport {
    /// The whole report as one HTML document.
    public var html: String {
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="jqc audit (\(Self.format))">
            <title>Audit of inspection \(Self.escape(inspectionID.lowercased))</title>
            <style>\(Self.css)</style>
            </head>
            <body>

            """
        out += verdictHTML
        out += summaryHTML
        out += formHTML
        out += timelineHTML
        out += issuesHTML
        out += photosHTML
        out += syncHTML
        out += templateHTML
        out += """
            <footer>Generated \(Self.escape(generatedAt.iso8601)) by <code>jqc audit</code> from the ledger at \
            <code>\(Self.escape(ledgerPath))</code>. Report format \(Self.format).</footer>
            </body>
            </html>

            """
        return out
    }

    // MARK: - Sections

    /// The verdict of the full walk (or of skipping it), with the digest.
    var chainHTML: String {
        var out = ""
        switch chain.result {
        case .intact:
            out +=
                "<p>Hash chain: <strong>INTACT</strong>. \(chain.checked) records verified from position 1 to the head "
                + "<code>\(Self.escape(chain.head.description))</code>"
                + (chain.seconds.map { " in " + Self.duration($0) } ?? "") + ".</p>\n"
        case .notIntact(let finding):
            out += "<p>Hash chain: <strong>NOT INTACT</strong>: \(Self.escape(finding.message)).</p>\n"
            out +=
                "<p>\(Self.escape(provenUnchanged.prefix(1).uppercased() + provenUnchanged.dropFirst())); recomputed head "
                + "<code>\(Self.escape(chain.head.description))</code>.</p>\n"
        case .skipped:
            out +=
                "<p>Hash chain: <strong>NOT VERIFIED</strong> (the audit ran with --no-verify). Stored head "
                + "<code>\(Self.escape(chain.head.description))</code>.</p>\n"
        }
        if let digest = chain.digest {
            out +=
                "<p id=\"digest\">Checked against the digest <code>\(Self.escape(digest.description))</code>: "
                + (chain.isIntact ? "the log extends it unchanged." : "see the finding above.") + "</p>\n"
        } else {
            out += "<p id=\"digest\">Checked against the digest: none was given.</p>\n"
        }
        if let witness = chain.witness { out += Self.witnessHTML(witness) }
        return out
    }

    var verdictHTML: String {
        let kind: String =
            switch chain.result {
            case .intact: isClean ? "intact" : "warning"
            case .notIntact: "broken"
            case .skipped: "warning"
            }
        var out = "<header id=\"verdict\" class=\"verdict \(kind)\">\n"
        out += "<h1>\(Self.escape(headline))</h1>\n"
        out += "<p class=\"subject\">Audit of inspection <code>\(Self.escape(inspectionID.lowercased))</code></p>\n"
        if let proof = chain.proof {
            for line in proofLines(proof) { out += "<p class=\"proof\">\(Self.escape(line))</p>\n" }
            if let witness = chain.witness { out += Self.witnessHTML(witness) }
        } else {
            out += chainHTML
        }
        let bad = photos.filter { $0.file.status != .matches && $0.file.status != .notChecked }.count
        out +=
            "<p>Photos: "
            + (photos.isEmpty
                ? "none captured."
                : bad == 0
                    ? "all \(photos.count) stored files match their recorded SHA-256."
                    : "<strong>\(bad) of \(photos.count) stored files are missing or altered.</strong>") + "</p>\n"
        if let asOf {
            out +=
                "<p class=\"asof\">As of \(Self.escape(asOf.requested)): the inspection as it stood after position "
                + "\(asOf.position) (\(Self.escape(asOf.recordedAt.iso8601))); later events are left out.</p>\n"
        }
        if !problems.isEmpty {
            out += "<ul class=\"problems\">\n"
            for problem in problems { out += "<li>\(Self.escape(problem))</li>\n" }
            out += "</ul>\n"
        }
        for note in notes { out += "<p class=\"note\">Note: \(Self.escape(note))</p>\n" }
        return out + "</header>\n"
    }

    var summaryHTML: String {
        var rows: [(String, String)] = []
        var status = Self.escape(form.status.rawValue)
        if form.status == .discarded {
            status += " — hidden from every view; the log keeps it"
            if let reason = form.discardReason { status += " (reason: \(Self.escape(reason)))" }
        }
        rows.append(("Status", status))
        rows.append(
            (
                "Facility",
                Self.escape("\(form.facilityName) (\(form.facilityID))")
                    + (form.areaID.map { Self.escape(", \(form.areaName ?? "area") (\($0))") } ?? "")
            ))
        if let found = template.template {
            rows.append(("Template", Self.escape("\(found.id) \"\(found.name)\" version \(found.version)")))
        } else {
            rows.append(("Template", Self.escape(form.templateID) + " (not found in the log)"))
        }
        rows.append(
            (
                "Template content hash",
                "<code>\(Self.escape(template.hash))</code> "
                    + (template.hashMatches ? "(matches the pinned content)" : "<strong>(MISMATCH)</strong>")
                    + " — pinned \(Self.escape(template.source))"
            ))
        if let started = form.startedAt {
            rows.append(
                ("Started", Self.escape("\(started.iso8601) by \(actorText(form.startedBy, device: form.startedOn))")))
        }
        if let completed = form.completedAt {
            rows.append(
                (
                    "Submitted",
                    Self.escape("\(completed.iso8601) by \(actorText(form.completedBy, device: form.completedOn))")
                ))
        }
        if let discarded = form.discardedAt { rows.append(("Discarded", Self.escape(discarded.iso8601))) }
        let score = form.score ?? scoreSoFar
        rows.append(
            (
                "Score",
                (score.map { FixedPoint.text($0, places: 2) } ?? "none")
                    + (form.status == .completed ? " (recorded at submit)" : " (so far)")
            ))
        var followUp = form.followUpRequired ? "required" : "not required"
        if let resolved = form.followUpResolvedBy { followUp += ", cleared by re-inspection \(resolved.lowercased)" }
        rows.append(("Follow-up", Self.escape(followUp)))
        rows.append(("Parent", parent.map { Self.escape(Self.linkText($0)) } ?? "none (not a re-inspection)"))
        rows.append(
            (
                "Re-inspections",
                children.isEmpty ? "none" : children.map { Self.escape(Self.linkText($0)) }.joined(separator: "<br>")
            ))
        rows.append(
            (
                "Sync",
                // The notes too: two server records of one inspection, or a
                // copy another device is expected to send, say it here.
                ([Self.escape(syncState + (form.sync.serverID.map { " (server id \($0))" } ?? ""))]
                    + form.syncNotes.filter {
                        $0.hasPrefix(InspectionState.serverRecordsNotePrefix)
                            || $0.hasPrefix(InspectionState.expectedElsewhereNotePrefix)
                    }
                    .map(Self.escape)).joined(separator: "<br>")
            ))
        var out = "<section id=\"summary\">\n<h2>Inspection</h2>\n<dl>\n"
        for (name, value) in rows { out += "<dt>\(Self.escape(name))</dt><dd>\(value)</dd>\n" }
        return out + "</dl>\n</section>\n"
    }

    /// The photos shown in the grid: the current value of a field.
    var photosInGrid: Set<UUID> {
        Set(
            form.values.values.compactMap { value in
                if case .photo(let photo) = value { return photo.photoID }
                return nil
            })
    }

    var formHTML: String {
        var out = "<section id=\"form\">\n<h2>\(Self.escape(formTitle))</h2>\n"
        guard let template = form.template else {
            return out + "<p>The template is unknown, so the form cannot be drawn.</p>\n</section>\n"
        }
        out +=
            "<p class=\"legend\">Laid out on the template's 12-column grid. * required; ! required and still empty.</p>\n"
        out += "<div class=\"grid\">\n"
        let missing = Set(form.missingRequiredFields().map(\.id))
        let evidence = Dictionary(photos.map { ($0.captured.photo.photoID, $0) }, uniquingKeysWith: { a, _ in a })
        for field in template.fields {
            let style =
                "grid-column: \(field.col) / span \(field.colSpan); grid-row: \(field.row) / span \(field.rowSpan)"
            switch field.type {
            case .section:
                out += "<div class=\"cell section\" style=\"\(style)\"><h3>\(Self.escape(field.label))</h3></div>\n"
            case .label:
                out += "<div class=\"cell label\" style=\"\(style)\">\(Self.escape(field.label))</div>\n"
            default:
                let marker = missing.contains(field.id) ? " !" : (field.required ? " *" : "")
                let empty = form.values[field.id] == nil
                out +=
                    "<div class=\"cell field\(empty ? " empty" : "")\(missing.contains(field.id) ? " missing" : "")\" "
                    + "style=\"\(style)\" data-field-id=\"\(Self.escape(field.id.rawValue))\">"
                out +=
                    "<div class=\"name\">\(Self.escape(field.label))<span class=\"meta\">\(Self.escape(marker)) "
                    + "[\(Self.escape(field.id.rawValue)) · \(Self.escape(field.type.rawValue))]</span></div>"
                out +=
                    "<div class=\"value\">\(valueHTML(form.values[field.id], field: field, evidence: evidence))</div>"
                out += "</div>\n"
            }
        }
        out += "</div>\n"
        let merged = MergeReport(form)
        if !merged.isEmpty {
            out += "<ul class=\"merge\">\n"
            for line in merged.lines() { out += "<li>\(Self.escape(line))</li>\n" }
            out += "</ul>\n"
        }
        return out + "</section>\n"
    }

    func valueHTML(_ value: FieldValue?, field: TemplateField, evidence: [UUID: PhotoEvidence]) -> String {
        guard let value else { return "<span class=\"none\">—</span>" }
        switch value {
        case .photo(let photo):
            guard let found = evidence[photo.photoID] else {
                return Self.escape(EventWording.valueText(value))
            }
            return Self.figure(found, id: "photo-\(photo.photoID.lowercased)")
        case .table(let rows):
            var out = "<table class=\"cells\">"
            if let columns = field.columns {
                out += "<tr>" + columns.map { "<th>\(Self.escape($0))</th>" }.joined() + "</tr>"
            }
            for row in rows { out += "<tr>" + row.map { "<td>\(Self.escape($0))</td>" }.joined() + "</tr>" }
            return out + "</table>"
        case .text(let text):
            return "<span class=\"text\">\(Self.escape(text))</span>"
        default:
            return Self.escape(EventWording.valueText(value))
        }
    }

    var timelineHTML: String {
        var out = "<section id=\"timeline\">\n<h2>Timeline (\(timeline.entries.count) events)</h2>\n"
        out +=
            "<p class=\"legend\">Every event of the inspection's stream in order, including discarded drafts and "
            + "sync outcomes. Each answer changed is shown old → new.</p>\n"
        out +=
            "<table class=\"timeline\">\n<thead><tr><th>Position</th><th>Recorded at (UTC)</th><th>Actor</th>"
            + "<th>Device</th><th>What happened</th><th>Chain</th></tr></thead>\n<tbody>\n"
        for entry in timeline.entries {
            let standing = standing(of: entry).rawValue
            var classes = ["event", standing]
            if entry.problem != nil { classes.append("problem") }
            if entry.hadNoEffect { classes.append("no-effect") }
            if entry.isSyncOutcome { classes.append("sync") }
            let id = entry.position > 0 ? " id=\"event-\(entry.position)\"" : ""
            out += "<tr\(id) class=\"\(classes.joined(separator: " "))\">"
            out += "<td class=\"num\">\(entry.position > 0 ? String(entry.position) : "—")</td>"
            if let record = entry.record {
                // The time may wrap after its date (a narrow window, paper), nowhere else.
                let time = Self.escape(record.recordedAt.iso8601).replacing("T", with: "<wbr>T")
                out += "<td><time>\(time)</time></td>"
                out += "<td>\(Self.escape(actorText(record.actor, device: record.device)))</td>"
                out += "<td><code>\(Self.escape(String(record.device.lowercased.prefix(8))))</code></td>"
            } else {
                out += "<td colspan=\"3\">stream version \(entry.streamVersion)</td>"
            }
            out += "<td><span class=\"summary\">\(Self.escape(entry.summary))</span>"
            if entry.hadNoEffect { out += " <em>(no effect on the record)</em>" }
            if entry.recordedBeforePrevious { out += " <strong class=\"bad\">\(TimelineEntry.clockWentBack)</strong>" }
            if !entry.changes.isEmpty, !entry.summaryStatesChanges {
                out += "<ul class=\"changes\">"
                for change in entry.changes {
                    out += "<li>\(Self.escape(change.text))</li>"
                }
                out += "</ul>"
            }
            if let problem = entry.problem { out += "<p class=\"problem\">\(Self.escape(problem))</p>" }
            if entry.carriedIn == nil, let hash = chainHash(at: entry.position) {
                out += "<p class=\"chain-hash\">chain hash <code class=\"hash\">\(Self.escape(hash))</code></p>"
            }
            out += "</td><td>\(Self.escape(standing.replacing("_", with: " ")))</td></tr>\n"
        }
        return out + "</tbody>\n</table>\n</section>\n"
    }

    var issuesHTML: String {
        var out = "<section id=\"issues\">\n<h2>Issues (\(form.issues.count))</h2>\n"
        guard !form.issues.isEmpty else { return out + "<p>None flagged.</p>\n</section>\n" }
        out +=
            "<table>\n<thead><tr><th>Issue</th><th>Severity</th><th>Description</th><th>Photo</th><th>Flagged</th>"
            + "<th>Server</th></tr></thead>\n<tbody>\n"
        for issue in form.issues {
            out += "<tr><td><code>\(Self.escape(issue.id.lowercased))</code></td>"
            out += "<td class=\"severity \(issue.severity.rawValue)\">\(Self.escape(issue.severity.rawValue))</td>"
            out += "<td class=\"text\">\(Self.escape(issue.description))</td>"
            out +=
                "<td>"
                + (issue.photoID.map {
                    "<a href=\"#photo-\($0.lowercased)\">\(Self.escape(EventWording.short($0)))</a>"
                }
                    ?? "—") + "</td>"
            out +=
                "<td>\(Self.escape(issue.flaggedAt.iso8601)) by \(Self.escape(actorText(issue.flaggedBy, device: issue.stamp.device)))</td>"
            out +=
                "<td>\(Self.escape(form.sync.acceptedIssues[issue.id] ?? Self.syncName(form.sync.status(of: SyncItem(kind: .issue, id: issue.id)))))</td></tr>\n"
        }
        return out + "</tbody>\n</table>\n</section>\n"
    }

    var photosHTML: String {
        let all = photos
        var out = "<section id=\"photos\">\n<h2>Photos (\(all.count))</h2>\n"
        guard !all.isEmpty else { return out + "<p>None captured.</p>\n</section>\n" }
        out +=
            "<p class=\"legend\">Each stored file was hashed again for this report and compared with the SHA-256 "
            + "recorded when it was captured.</p>\n<div class=\"photos\">\n"
        let inGrid = photosInGrid
        for photo in all {
            let id = photo.captured.photo.photoID
            if inGrid.contains(id) {
                out +=
                    "<div class=\"photo-ref\">\(Self.caption(photo)) <a href=\"#photo-\(id.lowercased)\">"
                    + "Shown in the form.</a></div>\n"
            } else {
                out += Self.figure(photo, id: "photo-\(id.lowercased)") + "\n"
            }
        }
        return out + "</div>\n</section>\n"
    }

    var syncHTML: String {
        let outcomes = syncOutcomes
        var out = "<section id=\"sync\">\n<h2>Sync (\(Self.escape(syncState)))</h2>\n"
        guard !outcomes.isEmpty else { return out + "<p>No sync outcomes recorded.</p>\n</section>\n" }
        out += "<ol class=\"outcomes\">\n"
        for entry in outcomes {
            out +=
                "<li><a href=\"#event-\(entry.position)\">\(entry.position)</a> "
                + "<time>\(Self.escape(entry.record?.recordedAt.iso8601 ?? ""))</time> "
                + "\(Self.escape(entry.summary))</li>\n"
        }
        return out + "</ol>\n</section>\n"
    }

    var templateHTML: String {
        var out = "<section id=\"template\">\n<h2>Pinned template</h2>\n"
        guard let found = template.template else {
            return out + "<p>Template <code>\(Self.escape(template.hash))</code> was not found in the log.</p>\n"
                + "</section>\n"
        }
        out +=
            "<p>\(Self.escape("\(found.id) \"\(found.name)\" version \(found.version)")), content SHA-256 "
            + "<code>\(Self.escape(template.hash))</code> "
            + (template.hashMatches
                ? "(matches)"
                : "<strong>(MISMATCH: the content hashes to "
                    + "\(Self.escape(found.contentHash)))</strong>") + ". Pinned \(Self.escape(template.source)).</p>\n"
        out +=
            "<table>\n<thead><tr><th>Id</th><th>Type</th><th>Label</th><th>Required</th><th>Grid</th></tr></thead>"
            + "\n<tbody>\n"
        for field in found.fields {
            out +=
                "<tr><td>\(Self.escape(field.id.rawValue))</td><td>\(Self.escape(field.type.rawValue))</td>"
                + "<td>\(Self.escape(field.label))</td><td>\(field.required ? "yes" : "")</td>"
                + "<td>col \(field.col) span \(field.colSpan), row \(field.row) span \(field.rowSpan)</td></tr>\n"
        }
        return out + "</tbody>\n</table>\n</section>\n"
    }
}
