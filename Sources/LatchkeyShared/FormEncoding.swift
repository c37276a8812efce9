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

    /// Decodes one component: `+` is a space, `%XX` a byte; malformed escapes are kept as written,
    /// and a component whose bytes are not UTF-8 is returned with only its `+`s replaced.
    public static func unescape(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var input = text.utf8[...]
        while let byte = input.popFirst() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                var lookahead = input
                if let high = lookahead.popFirst().flatMap(hexValue), let low = lookahead.popFirst().flatMap(hexValue) {
                    bytes.append(high << 4 | low)
                    input = lookahead
                } else {
                    bytes.append(byte)
                }
            default: bytes.append(byte)
            }
        }
        let decoded = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces invalid sequences, so any difference means the bytes were not UTF-8.
        guard decoded.utf8.elementsEqual(bytes) else {
            return String(decoding: text.utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        }
        return decoded
    }

    /// Encodes one component: unreserved characters (RFC 3986 §2.3) as they are, space as `+`,
    /// every other byte as `%XX`.
    ///
    /// Written over bytes: Foundation's `addingPercentEncoding` with a character set built per call
    /// was a tenth of a classic sign-in's CPU (it encodes every Graph query; docs/performance.md).
    public static func escape(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.append(byte)
            case UInt8(ascii: " "): output.append(UInt8(ascii: "+"))
            default:
                output.append(UInt8(ascii: "%"))
                output.append(upperHex[Int(byte >> 4)])
                output.append(upperHex[Int(byte & 15)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes pairs in order, which keeps URLs readable and deterministic.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
