// MARK: - Pretty printing

extension JSONValue {
    /// The value as indented JSON text (two spaces, `"key": value`), members in
    /// their stored order: what `jqc --json` and the audit report print, read
    /// by people as often as by tools. Numbers keep their literal text.
    public func prettyPrinted(indent: Int = 0) -> String {
        var out = ""
        writePretty(to: &out, indent: indent)
        return out
    }

    private func writePretty(to out: inout String, indent: Int) {
        let inner = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch self {
        case .array(let items) where !items.isEmpty:
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += inner
                item.writePretty(to: &out, indent: indent + 1)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += closing + "]"
        case .object(let members) where !members.isEmpty:
            out += "{\n"
            for (i, member) in members.enumerated() {
                out += inner
                Self.writeString(member.key, to: &out)
                out += ": "
                member.value.writePretty(to: &out, indent: indent + 1)
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += closing + "}"
        default:
            write(to: &out)
        }
    }

    /// The same value with every object's members in key order (by Unicode
    /// scalars, as `sort` over UTF-8 bytes would put them), at every depth:
    /// `jqc --json` prints keys sorted so its output is stable for scripts
    /// and diffs whatever order the code built it in.
    public func sortingKeys() -> JSONValue {
        switch self {
        case .array(let items): .array(items.map { $0.sortingKeys() })
        case .object(let members):
            .object(
                members.map { Member($0.key, $0.value.sortingKeys()) }
                    .sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) })
        default: self
        }
    }
}
