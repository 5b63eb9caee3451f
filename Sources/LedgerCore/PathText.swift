/// A file path's last component and its parent, worked out from the text
/// alone (no file is looked at), as `NSString`'s `lastPathComponent` and
/// `deletingLastPathComponent` give them: the jqc binary links only
/// FoundationEssentials, which has no `NSString`.
public enum PathText {
    /// The last component: "b" of "/a/b" and of "a/b/", "/" of "/", "" of "".
    public static func lastComponent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// The path without its last component: "/a" of "/a/b", "/" of "/a"
    /// and of "/", "" of "a" and of "".
    public static func parent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let parent = withoutTrailingSlashes(String(trimmed[..<slash]))
        return parent.isEmpty ? "/" : parent
    }

    /// `path` without slashes at its end, except a lone "/".
    private static func withoutTrailingSlashes(_ path: String) -> String {
        var text = Substring(path)
        while text.count > 1, text.last == "/" { text = text.dropLast() }
        return String(text)
    }
}
