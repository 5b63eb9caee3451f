import FoundationEssentials
import InspectionDomain
import LedgerCore

extension AuditReport {
    // MARK: - Pieces

    /// A photo with its hash and the check of its file; the bytes embedded
    /// as a `data:` URI when present.
    static func figure(_ photo: PhotoEvidence, id: String) -> String {
        let reference = photo.captured.photo
        var out = "<figure id=\"\(escape(id))\" class=\"photo \(photo.file.status.name)\">"
        if let bytes = photo.file.contents {
            out +=
                "<img src=\"data:\(escape(reference.mediaType));base64,\(Data(bytes).base64EncodedString())\" "
                + "alt=\"\(escape("\(photo.captured.kind.rawValue) \(reference.photoID.lowercased)"))\">"
        } else {
            out += "<div class=\"absent\">no file</div>"
        }
        return out + "<figcaption>\(caption(photo))</figcaption></figure>"
    }

    static func caption(_ photo: PhotoEvidence) -> String {
        let reference = photo.captured.photo
        var out =
            "\(escape(photo.captured.kind.rawValue)) <code>\(escape(EventWording.short(reference.photoID)))</code>, "
            + "\(escape(reference.mediaType)), \(reference.size) bytes, captured at position \(photo.position)"
        if let issue = photo.captured.issueID { out += " for issue <code>\(escape(EventWording.short(issue)))</code>" }
        out += "<br>sha256 <code class=\"hash\">\(escape(reference.sha256.hex))</code><br>"
        switch photo.file.status {
        case .matches: out += "<span class=\"ok\">The stored file matches this hash.</span>"
        case .missing: out += "<strong class=\"bad\">MISSING: no stored file has this hash.</strong>"
        case .altered(let actual):
            out +=
                "<strong class=\"bad\">ALTERED: the stored file now hashes to <code>\(escape(actual))</code>.</strong>"
        case .notChecked: out += "The stored file was not checked."
        }
        if let path = photo.serverPath { out += "<br>Uploaded to <code>\(escape(path))</code>" }
        if photo.ignored { out += "<br><em>Captured after the record was final (no effect).</em>" }
        return out
    }

    /// Text made safe for HTML content and attribute values: markup
    /// characters as entities, and control characters, bidi embeddings,
    /// overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069,
    /// U+200E/F, U+061C) as the visible `\u{XXXX}` escapes the text outputs
    /// show (`TerminalText.safe`), so that no recorded or template text can
    /// reverse the reading order of what follows it in the report.
    public static func escape(_ text: String) -> String {
        let text = TerminalText.safe(text)
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static let css = """

        :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
        body { margin: 0 auto; max-width: 1100px; padding: 1.5rem; color: #1b1f24; background: #fff; line-height: 1.4; }
        /* Paths (/uploads/<64 hex>), hashes and ids have no break opportunities: without this one of them
           makes the page wider than the window. Only on the text that holds them, never on whole table
           cells: 'anywhere' lowers a cell's narrowest width, and the table would squeeze its short columns
           (Position, Actor) to a letter a line. */
        code, dd, .summary, ul.changes li, .problem, p.chain-hash, .photo-ref, figcaption, td.text,
        ol.outcomes li, .verdict p, footer { overflow-wrap: anywhere; }
        td > code { overflow-wrap: normal; }
        code, time, .num { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.9em; }
        code.hash { word-break: break-all; }
        h1 { margin: 0 0 0.5rem; font-size: 1.6rem; }
        h2 { border-bottom: 1px solid #d0d7de; padding-bottom: 0.25rem; margin-top: 2rem; }
        .verdict { border: 3px solid; border-radius: 8px; padding: 1rem 1.25rem; }
        .verdict.intact { border-color: #1a7f37; background: #dafbe1; }
        .verdict.broken { border-color: #cf222e; background: #ffebe9; }
        .verdict.warning { border-color: #9a6700; background: #fff8c5; }
        .problems li, .problem, .bad { color: #a40e26; }
        .ok { color: #1a7f37; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
        dt { font-weight: 600; }
        dd { margin: 0; }
        .grid { display: grid; grid-template-columns: repeat(12, minmax(0, 1fr)); gap: 6px; }
        .cell { border: 1px solid #d0d7de; border-radius: 4px; padding: 0.4rem 0.5rem; min-height: 2.5rem; }
        .cell.section { border: none; background: #f6f8fa; }
        .cell.section h3 { margin: 0; font-size: 1rem; }
        .cell.label { border-style: dashed; color: #57606a; }
        .cell.missing { border-color: #cf222e; }
        .cell .name { font-size: 0.8rem; color: #57606a; }
        .cell .meta { margin-left: 0.3rem; }
        .cell .value { font-weight: 600; white-space: pre-wrap; overflow-wrap: anywhere; }
        .cell.empty .value { color: #8c959f; font-weight: normal; }
        table { border-collapse: collapse; width: 100%; }
        th, td { border-bottom: 1px solid #d0d7de; padding: 0.3rem 0.4rem; text-align: left; vertical-align: top; }
        table.cells td, table.cells th { border: 1px solid #d0d7de; font-weight: normal; }
        tr.failed, tr.missing, tr.problem { background: #ffebe9; }
        tr.no-effect { color: #57606a; }
        tr.sync { background: #f6f8fa; }
        p.chain-hash { margin: 0.15rem 0 0; font-size: 0.75rem; color: #57606a; }
        ul.changes { margin: 0.2rem 0 0 1rem; padding: 0; }
        .photos { display: flex; flex-wrap: wrap; gap: 1rem; }
        figure.photo { margin: 0; max-width: 320px; border: 1px solid #d0d7de; border-radius: 4px; padding: 0.5rem; }
        figure.photo.missing, figure.photo.altered { border: 3px solid #cf222e; }
        figure.photo img { max-width: 100%; max-height: 240px; display: block; image-rendering: pixelated; min-width: 48px; }
        figure.photo .absent { width: 120px; height: 80px; background: #ffebe9; display: flex; align-items: center; justify-content: center; }
        figcaption { font-size: 0.8rem; margin-top: 0.3rem; font-weight: normal; }
        td time { white-space: nowrap; }
        /* In a narrow window a time may wrap, after its date only (the <wbr>): it has no spaces. */
        @media (max-width: 1000px) { td time { white-space: normal; } }
        .photo-ref { font-size: 0.8rem; max-width: 320px; }
        .severity.high, .severity.critical { color: #a40e26; font-weight: 600; }
        footer { margin-top: 2rem; font-size: 0.8rem; color: #57606a; }
        @page { margin: 12mm; }
        /* On paper the page is narrower than any window: no fixed widths, smaller type, nothing cut off. */
        @media print {
          body { max-width: none; padding: 0; font-size: 9.5pt; }
          .verdict { break-inside: avoid; }
          tr { break-inside: avoid; }
          td time { white-space: normal; }
          figure.photo, .photo-ref { max-width: 45%; }
          .verdict.intact, .verdict.broken, .verdict.warning, tr.failed, tr.missing, tr.problem, tr.sync {
            print-color-adjust: exact; -webkit-print-color-adjust: exact; }
        }

        """
}

extension AuditReport {
    /// The witness's paragraphs: the line, a fork a witness reported, and
    /// with `--witness` each witness asked now (a fork marked as one).
    static func witnessHTML(_ witness: WitnessEvidence) -> String {
        var out = "<p id=\"witness\">\(escape(witness.line))</p>\n"
        if let fork = witness.fork { out += "<p id=\"witness-fork\" class=\"broken\">\(escape(fork))</p>\n" }
        for asked in witness.askedNow {
            let kind = asked.isFork ? " broken" : ""
            out += "<p class=\"witness-asked\(kind)\">\(escape(asked.line))</p>\n"
        }
        return out
    }
}
