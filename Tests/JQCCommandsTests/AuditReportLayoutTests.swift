import Foundation
import LedgerTestSupport
import Testing

/// The HTML audit report in headless Chromium: it fits the window at every
/// width from 800 px (nothing wider than the page, however long a path or
/// hash), and printed to PDF every word of the timeline is on the page.
@Suite struct AuditReportLayoutTests {
    let scenario: AuditScenario

    init() throws { scenario = try AuditCommandTests.shared.get() }

    static var chromium: String {
        get throws {
            try #require(
                ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
                    FileManager.default.isExecutableFile(atPath: $0)
                },
                "chromium is not installed: run Tools/setup (it installs Debian's chromium)")
        }
    }

    /// The report of the scenario's inspection (uploaded photos, so
    /// `/uploads/<64 hex>` paths; long hashes; a re-inspection).
    func writeReport(in directory: TemporaryDirectory) throws -> String {
        let file = directory.appending("report.html")
        let written = try scenario.jqc("audit", scenario.parent, "--format", "html", "-o", file)
        #expect(written.status == 0, "\(written.stderr)")
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    func runChromium(_ arguments: [String], profile: String) throws -> ProcessResult {
        try ProcessRun.run(
            try Self.chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                "--user-data-dir=\(profile)",
            ] + arguments)
    }

    @Test(arguments: [800, 1024, 1280])
    func theReportFitsTheWindow(width: Int) throws {
        let directory = TemporaryDirectory(prefix: "audit-layout")
        let html = try writeReport(in: directory)
        // The report's CSP forbids scripts (rightly): only this measuring
        // copy drops it and writes the page's widths into the DOM.
        let csp = try #require(
            html.range(of: #"<meta http-equiv="Content-Security-Policy"[^>]*>"#, options: .regularExpression))
        var measuring = html
        measuring.removeSubrange(csp)
        let script = """
            <script>
            window.addEventListener('load', () => {
              const wide = [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
                .slice(0, 5).map(e => e.tagName + '.' + e.className + ': ' + (e.textContent || '').slice(0, 60));
              const out = document.createElement('pre');
              out.id = 'measured';
              out.textContent = JSON.stringify({
                scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, wide });
              document.body.appendChild(out);
            });
            </script>
            """
        measuring = measuring.replacingOccurrences(of: "</body>", with: script + "</body>")
        let file = directory.appending("measuring.html")
        try measuring.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runChromium(
            ["--window-size=\(width),900", "--virtual-time-budget=2000", "--dump-dom", "file://\(file)"],
            profile: directory.appending("profile"))
        #expect(result.status == 0, "\(result.stderr)")
        let match = try #require(
            result.stdout.range(of: #"<pre id="measured">[^<]*</pre>"#, options: .regularExpression),
            "the measuring script did not run: \(result.stderr)")
        let json = String(result.stdout[match]).replacingOccurrences(of: "<pre id=\"measured\">", with: "")
            .replacingOccurrences(of: "</pre>", with: "").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
        let measured = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let scrollWidth = try #require(measured["scrollWidth"] as? Int)
        let innerWidth = try #require(measured["innerWidth"] as? Int)
        #expect(innerWidth == width, "the window is not \(width) px wide: \(measured)")
        #expect(
            scrollWidth <= innerWidth, "at \(width) px the page is \(scrollWidth) px wide: \(measured["wide"] ?? "")")
    }

    @Test func theReportPrintsToPDFWithTheWholeTimelineOnThePage() throws {
        let directory = TemporaryDirectory(prefix: "audit-print")
        _ = try writeReport(in: directory)
        let pdf = directory.appending("report.pdf")
        let result = try runChromium(
            ["--no-pdf-header-footer", "--print-to-pdf=\(pdf)", "file://\(directory.appending("report.html"))"],
            profile: directory.appending("profile"))
        #expect(result.status == 0, "\(result.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: pdf)[.size] as? Int)
        #expect(size > 1000, "the PDF is \(size) bytes")

        // Every word with its box: any word past the page's right edge is clipped in print.
        let pdftotext = try #require(
            ["/usr/bin/pdftotext"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "pdftotext is not installed: run Tools/setup (it installs poppler-utils)")
        let boxes = directory.appending("boxes.html")
        let extracted = try ProcessRun.run(pdftotext, ["-bbox", pdf, boxes])
        #expect(extracted.status == 0, "\(extracted.stderr)")
        let layout = try String(contentsOfFile: boxes, encoding: .utf8)
        let pageWidth = try #require(
            Self.number(#"<page width="([0-9.]+)""#, in: layout), "no page in the PDF's text: \(layout.prefix(300))")
        var words: [String] = []
        var clipped: [String] = []
        let pattern = try NSRegularExpression(
            pattern: #"<word xMin="([0-9.]+)" yMin="[0-9.]+" xMax="([0-9.]+)"[^>]*>([^<]*)</word>"#)
        for match in pattern.matches(in: layout, range: NSRange(layout.startIndex..., in: layout)) {
            let text = { (i: Int) in String(layout[Range(match.range(at: i), in: layout)!]) }
            let word = Self.unescape(text(3))
            words.append(word)
            if let xMax = Double(text(2)), xMax > pageWidth + 0.5 { clipped.append("\(word) (ends at \(xMax))") }
        }
        #expect(clipped.isEmpty, "words past the page's edge (\(pageWidth) pt): \(clipped.prefix(10))")
        // The timeline's text is there, even where it wraps: compare without spaces.
        let printed = words.joined()
        let timeline = try #require(try scenario.report(scenario.parent)["timeline"] as? [[String: Any]])
        for entry in timeline {
            let summary = try #require(entry["summary"] as? String)
            let compact = summary.filter { !$0.isWhitespace }
            let present = printed.contains(compact)
            #expect(present, "the printed timeline lacks: \(summary)")
        }
    }

    static func number(_ pattern: String, in text: String) -> Double? {
        guard let range = text.range(of: pattern, options: .regularExpression) else { return nil }
        let digits = text[range].drop { !$0.isNumber }.prefix { $0.isNumber || $0 == "." }
        return Double(digits)
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
