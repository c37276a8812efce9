/// Escapes text for HTML element content and attribute values (the emulator's dialog and the
/// server's Easy Login pages both put request-derived text into HTML).
public enum HTML {
    /// `&`, `<`, `>`, `"` and `'` replaced by entities.
    public static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
