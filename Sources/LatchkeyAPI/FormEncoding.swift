import Foundation

/// `application/x-www-form-urlencoded` (and query strings), as browsers and Facebook write it:
/// everything but unreserved characters percent-encoded, `+` for space.
public enum FormEncoding {
    /// Parses pairs; a repeated key keeps its last value, a key without `=` gets `""`.
    public static func decode(_ text: String) -> [String: String] {
        Dictionary(pairs(text), uniquingKeysWith: { _, last in last })
    }

    /// The pairs in order, repeats kept (for callers that must refuse them); empty keys dropped.
    public static func pairs(_ text: String) -> [(String, String)] {
        text.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = unescape(parts[0])
            guard !key.isEmpty else { return nil }
            return (key, parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    /// Decodes one component; malformed percent-escapes are kept as written.
    public static func unescape(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Encodes one component.
    public static func escape(_ text: String) -> String {
        (text.addingPercentEncoding(withAllowedCharacters: unreserved.union(.init(charactersIn: " "))) ?? text)
            .replacingOccurrences(of: " ", with: "+")
    }

    /// Encodes pairs in order, which keeps URLs readable and deterministic.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }
}
