/// The redaction of one free text (`Redaction.text`), in passes that are
/// each linear in the bytes they read.
///
/// A server's message is hostile input: a backtracking pattern over it took
/// seconds for 2 KB and never finished for 50 KB. So every pass here is a
/// hand-written scan over UTF-8 bytes that looks at each byte a bounded
/// number of times: the secrets by value (Knuth–Morris–Pratt, one scan per
/// secret), then URLs, then an authorization scheme's credential, then
/// `name=value` pairs, each pass leaving alone what an earlier one replaced.
///
/// Only a window is read: the first `limit` scalars, plus the longest secret
/// and a margin, so that a secret or a credential that starts inside what is
/// kept is seen whole. Each byte remembers its offset in the original
/// (`origin`), so the cut falls where the original reached `limit`, however
/// much the replacements shortened the text before it: text from beyond the
/// window, where a secret may be only partly present, is never shown.
struct FreeTextRedaction {
    /// The redacted text, cut after `limit` scalars of the original, saying so.
    let result: String

    /// Bytes being redacted, each with the offset in the original it came
    /// from and whether it is part of a replacement (which later passes skip).
    private struct Marked {
        var bytes: [UInt8] = []
        var origin: [Int] = []
        var replaced: [Bool] = []
        /// The original's offset at the end of the window.
        var end: Int

        var count: Int { bytes.count }

        func isPlain(_ index: Int) -> Bool { index < bytes.count && !replaced[index] }

        /// Where the plain bytes from `start` on that `belongs` accepts end.
        func plainEnd(from start: Int, while belongs: (UInt8) -> Bool) -> Int {
            var end = start
            while isPlain(end), belongs(bytes[end]) { end += 1 }
            return end
        }
    }

    /// One replacement: `range` of the current bytes becomes `text`.
    private struct Edit {
        var range: Range<Int>
        var text: [UInt8]
    }

    static let placeholder = Array(Redaction.placeholder.utf8)
    /// Read beyond `limit` (and beyond the longest secret) so that a
    /// credential starting inside the kept part is seen to its end.
    static let margin = 1024

    init(_ text: String, secrets: [String], keeping requested: Int) {
        // Bounded so that the arithmetic below cannot overflow.
        let limit = min(max(0, requested), 1 << 32)
        let secretBytes = secrets.map { Array($0.utf8) }.filter { !$0.isEmpty }
        let longest = secretBytes.map(\.count).max() ?? 0
        // A scalar takes at most 4 bytes: this prefix holds the window.
        let readable = Array(text.utf8.prefix(limit * 4 + longest + Self.margin + 4))
        let limitOffset = Self.offset(afterScalars: limit, in: readable)
        var windowEnd = min(readable.count, limitOffset + longest + Self.margin)
        while windowEnd < readable.count, Self.isContinuation(readable[windowEnd]) { windowEnd -= 1 }
        let window = Array(readable[..<windowEnd])
        let cutShort = windowEnd < readable.count || readable.count < text.utf8.count

        var marked = Marked(
            bytes: window, origin: Array(0..<window.count), replaced: Array(repeating: false, count: window.count),
            end: windowEnd)
        marked = Self.apply(Self.secretEdits(marked, secretBytes), to: marked)
        marked = Self.apply(Self.urlEdits(marked, cutShort: cutShort), to: marked)
        marked = Self.apply(Self.schemeEdits(marked), to: marked)
        marked = Self.apply(Self.namedEdits(marked), to: marked)

        // Kept: every byte that came from before the limit; a replacement
        // starting before it is kept whole (its bytes share one origin).
        var kept = 0
        while kept < marked.count, marked.origin[kept] < limitOffset { kept += 1 }
        // Placeholders are longer than what they replace: the kept part is
        // held to half as much again, never ending inside a placeholder.
        let outputLimit = Self.offset(afterScalars: limit + limit / 2, in: marked.bytes)
        if kept > outputLimit {
            kept = outputLimit
            while kept > 0, marked.replaced[kept], marked.replaced[kept - 1],
                marked.origin[kept - 1] == marked.origin[kept]
            {
                kept -= 1
            }
        }
        let consumed = kept < marked.count ? marked.origin[kept] : marked.end
        let shown = String(decoding: marked.bytes[..<kept], as: UTF8.self)
        let left = text.utf8.dropFirst(consumed).reduce(0) { $0 + (Self.isContinuation($1) ? 0 : 1) }
        result = left == 0 ? shown : "\(shown)… (\(left) more characters not shown)"
    }

    // MARK: - Passes

    /// Every place a secret occurs, overlapping ones merged, as one placeholder each.
    private static func secretEdits(_ text: Marked, _ secrets: [[UInt8]]) -> [Edit] {
        guard !secrets.isEmpty, text.count > 0 else { return [] }
        // +1 where an occurrence starts, -1 where it ends: one sum marks them all.
        var depth = [Int](repeating: 0, count: text.count + 1)
        for secret in secrets where secret.count <= text.count {
            let failure = failureTable(secret)
            var matched = 0
            for (index, byte) in text.bytes.enumerated() {
                while matched > 0, secret[matched] != byte { matched = failure[matched - 1] }
                if secret[matched] == byte { matched += 1 }
                if matched == secret.count {
                    depth[index + 1 - secret.count] += 1
                    depth[index + 1] -= 1
                    matched = failure[matched - 1]
                }
            }
        }
        var edits: [Edit] = []
        var running = 0
        var start: Int?
        for index in 0...text.count {
            running += depth[index]
            if running > 0, start == nil { start = index }
            if running == 0, let begun = start {
                edits.append(Edit(range: begun..<index, text: placeholder))
                start = nil
            }
        }
        return edits
    }

    /// Knuth–Morris–Pratt: for each prefix of `pattern`, the length of its
    /// longest proper prefix that is also its suffix.
    private static func failureTable(_ pattern: [UInt8]) -> [Int] {
        var table = [Int](repeating: 0, count: pattern.count)
        var length = 0
        var index = 1
        while index < pattern.count {
            if pattern[index] == pattern[length] {
                length += 1
                table[index] = length
                index += 1
            } else if length > 0 {
                length = table[length - 1]
            } else {
                index += 1
            }
        }
        return table
    }

    /// `scheme://…` up to a space, a quote or `<>`: its user info's password
    /// (or a lone user name, which may be a token) and the values of its
    /// credential query parameters, as `Redaction.url` does. An authority
    /// that reaches the end of a window the text goes on past may hide its
    /// user info beyond it, so it is replaced whole.
    private static func urlEdits(_ text: Marked, cutShort: Bool) -> [Edit] {
        runEdits(text, of: isSchemeByte) { run in
            let colon = run.upperBound
            // The scheme starts at the run's first letter; any will do.
            guard run.contains(where: { isLetter(text.bytes[$0]) }), colon + 3 <= text.count,
                (colon..<colon + 3).allSatisfy(text.isPlain),
                text.bytes[colon] == UInt8(ascii: ":"), text.bytes[colon + 1] == UInt8(ascii: "/"),
                text.bytes[colon + 2] == UInt8(ascii: "/")
            else { return nil }
            let authorityStart = colon + 3
            let end = text.plainEnd(from: authorityStart) { !endsURL($0) }
            guard end > authorityStart else { return ([], authorityStart) }
            return (
                urlPartEdits(text, authority: authorityStart, end: end, reachesCut: cutShort && end == text.count), end
            )
        }
    }

    private static func urlPartEdits(_ text: Marked, authority start: Int, end: Int, reachesCut: Bool) -> [Edit] {
        let bytes = text.bytes
        var authorityEnd = start
        while authorityEnd < end, !"/?#".utf8.contains(bytes[authorityEnd]) { authorityEnd += 1 }
        if reachesCut, authorityEnd == end {
            return [Edit(range: start..<end, text: placeholder)]
        }
        var edits: [Edit] = []
        if let at = (start..<authorityEnd).last(where: { bytes[$0] == UInt8(ascii: "@") }) {
            if let colon = (start..<at).first(where: { bytes[$0] == UInt8(ascii: ":") }) {
                edits.append(Edit(range: colon + 1..<at, text: placeholder))
            } else {
                edits.append(Edit(range: start..<at, text: placeholder))
            }
        }
        guard let question = (authorityEnd..<end).first(where: { bytes[$0] == UInt8(ascii: "?") }) else {
            return edits
        }
        let queryEnd = (question + 1..<end).first { bytes[$0] == UInt8(ascii: "#") } ?? end
        var parameter = question + 1
        while parameter <= queryEnd {
            let parameterEnd = (parameter..<queryEnd).first { bytes[$0] == UInt8(ascii: "&") } ?? queryEnd
            if let equals = (parameter..<parameterEnd).first(where: { bytes[$0] == UInt8(ascii: "=") }),
                Redaction.isCredential(name: String(decoding: bytes[parameter..<equals], as: UTF8.self))
            {
                edits.append(Edit(range: equals + 1..<parameterEnd, text: placeholder))
            }
            parameter = parameterEnd + 1
        }
        return edits
    }

    /// `Bearer x`, `Basic x`, `Digest x` (any case, at the start of a word):
    /// the credential after the scheme and its blanks.
    private static func schemeEdits(_ text: Marked) -> [Edit] {
        let schemes = ["bearer", "basic", "digest"].map { Array($0.utf8) }
        var edits: [Edit] = []
        var index = 0
        while index < text.count {
            let startsWord =
                text.isPlain(index) && isWordByte(text.bytes[index])
                && (index == 0 || !text.isPlain(index - 1) || !isWordByte(text.bytes[index - 1]))
            guard startsWord,
                let scheme = schemes.first(where: { startsWith($0, text, at: index) })
            else {
                index += 1
                continue
            }
            let blanksEnd = text.plainEnd(from: index + scheme.count, while: isBlank)
            let valueEnd = text.plainEnd(from: blanksEnd) { !endsSchemeValue($0) }
            if blanksEnd > index + scheme.count, valueEnd > blanksEnd {
                edits.append(Edit(range: blanksEnd..<valueEnd, text: placeholder))
                index = valueEnd
            } else {
                index += scheme.count
            }
        }
        return edits
    }

    /// `name=value` or `"name": "value"` where the name holds a credential's
    /// fragment (`password`, `refresh_token`, `X-Api-Key`): the value.
    private static func namedEdits(_ text: Marked) -> [Edit] {
        runEdits(text, of: isNameByte) { name in
            guard let valueStart = separatorEnd(text, at: name.upperBound), namesCredential(text.bytes[name]) else {
                return nil
            }
            let valueEnd = text.plainEnd(from: valueStart) { !endsNamedValue($0) }
            guard valueEnd > valueStart else { return nil }
            return ([Edit(range: valueStart..<valueEnd, text: placeholder)], valueEnd)
        }
    }

    /// The edits `edit` finds at each longest run of plain bytes that
    /// `belongs` accepts, scanning on where it says (nil: after the run).
    private static func runEdits(
        _ text: Marked, of belongs: (UInt8) -> Bool, _ edit: (Range<Int>) -> (edits: [Edit], next: Int)?
    ) -> [Edit] {
        var edits: [Edit] = []
        var index = 0
        while index < text.count {
            guard text.isPlain(index), belongs(text.bytes[index]) else {
                index += 1
                continue
            }
            let run = index..<text.plainEnd(from: index, while: belongs)
            guard let found = edit(run) else {
                index = run.upperBound
                continue
            }
            edits += found.edits
            index = found.next
        }
        return edits
    }

    /// After a name: `=`, or `"` blanks `:` blanks `"`; answers where the value starts.
    private static func separatorEnd(_ text: Marked, at index: Int) -> Int? {
        guard text.isPlain(index) else { return nil }
        if text.bytes[index] == UInt8(ascii: "=") { return index + 1 }
        guard text.bytes[index] == UInt8(ascii: "\"") else { return nil }
        let colon = text.plainEnd(from: index + 1, while: isBlank)
        guard text.isPlain(colon), text.bytes[colon] == UInt8(ascii: ":") else { return nil }
        let quote = text.plainEnd(from: colon + 1, while: isBlank)
        guard text.isPlain(quote), text.bytes[quote] == UInt8(ascii: "\"") else { return nil }
        return quote + 1
    }

    static let credentialFragments = Redaction.credentialNameFragments.map { Array($0.utf8) }

    private static func namesCredential(_ name: ArraySlice<UInt8>) -> Bool {
        let lowered = name.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }
        return credentialFragments.contains { fragment in
            guard fragment.count <= lowered.count else { return false }
            return (0...lowered.count - fragment.count).contains { start in
                lowered[start..<start + fragment.count].elementsEqual(fragment)
            }
        }
    }

    // MARK: - Putting edits in

    /// `text` with each edit's range replaced; a replacement's bytes carry
    /// the origin of where it starts and are marked replaced.
    private static func apply(_ edits: [Edit], to text: Marked) -> Marked {
        guard !edits.isEmpty else { return text }
        var result = Marked(end: text.end)
        var next = 0
        func copy(_ range: Range<Int>) {
            result.bytes += text.bytes[range]
            result.origin += text.origin[range]
            result.replaced += text.replaced[range]
        }
        for edit in edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound })
        where edit.range.lowerBound >= next {
            copy(next..<edit.range.lowerBound)
            let origin = edit.range.lowerBound < text.count ? text.origin[edit.range.lowerBound] : text.end
            result.bytes += edit.text
            result.origin += Array(repeating: origin, count: edit.text.count)
            result.replaced += Array(repeating: true, count: edit.text.count)
            next = edit.range.upperBound
        }
        copy(next..<text.count)
        return result
    }

    // MARK: - Bytes

    /// The byte offset after `count` scalars (or the end).
    private static func offset<Bytes: Collection<UInt8>>(afterScalars count: Int, in bytes: Bytes) -> Int {
        var seen = 0
        for (index, byte) in bytes.enumerated() where !isContinuation(byte) {
            if seen == count { return index }
            seen += 1
        }
        return bytes.count
    }

    private static func isContinuation(_ byte: UInt8) -> Bool { byte & 0xC0 == 0x80 }

    private static func startsWith(_ word: [UInt8], _ text: Marked, at index: Int) -> Bool {
        guard index + word.count <= text.count else { return false }
        return (0..<word.count).allSatisfy { offset in
            text.isPlain(index + offset) && text.bytes[index + offset] | 0x20 == word[offset]
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// A letter, digit or `_`, or any byte of a non-ASCII scalar (which may
    /// be a letter: counting it as one only ever redacts more).
    private static func isWordByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private static func isNameByte(_ byte: UInt8) -> Bool { isWordByte(byte) || byte == UInt8(ascii: "-") }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        byte < 0x80 && (isLetter(byte) || isDigit(byte) || "+.-".utf8.contains(byte))
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    private static func endsURL(_ byte: UInt8) -> Bool { isBlank(byte) || "\"'<>".utf8.contains(byte) }

    private static func endsSchemeValue(_ byte: UInt8) -> Bool { isBlank(byte) || ",;\"'<>".utf8.contains(byte) }

    private static func endsNamedValue(_ byte: UInt8) -> Bool { isBlank(byte) || "&,;\"'<>".utf8.contains(byte) }
}
