/// Escapes text for HTML element content and attribute values (the emulator's dialog and the
/// server's Easy Login pages both put request-derived text into HTML).
public enum HTML {
    /// `&`, `<`, `>`, `"` and `'` replaced by entities.
    ///
    /// Scalar by scalar, not `Character` by `Character`: a `Character` is a grapheme cluster, and
    /// `"` followed by a combining mark (U+0301), or `<` after a prepending mark (U+0D4E), is one
    /// cluster equal to neither, which an escaper comparing characters lets through whole, while a
    /// browser's parser still sees the quote or the bracket.
    public static func escape(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result.append(contentsOf: "&amp;".unicodeScalars)
            case "<": result.append(contentsOf: "&lt;".unicodeScalars)
            case ">": result.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": result.append(contentsOf: "&quot;".unicodeScalars)
            case "'": result.append(contentsOf: "&#39;".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }
}
