import Foundation
import LatchkeyAPI

/// A parsed Graph `fields=` parameter: top-level names with their modifiers
/// (`picture.type(large)`, `friends.limit(5){name}`).
struct FieldSelection: Sendable, Equatable {
    struct Field: Sendable, Equatable {
        let name: String
        /// Modifiers like `type(large)` → `["type": "large"]`.
        let modifiers: [String: String]
        /// The fields asked of the value in braces (`picture{url}` → `["url"]`); `nil` for all.
        var subfields: [String]? = nil
    }

    let fields: [Field]

    /// Without `fields`, Graph answers `id` and `name` only.
    static let defaultFields = FieldSelection(fields: [
        .init(name: "id", modifiers: [:]), .init(name: "name", modifiers: [:]),
    ])

    init(fields: [Field]) { self.fields = fields }

    /// Parses a `fields` value; `nil` or empty gives the default `id,name`.
    init(parsing text: String?) {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            self = .defaultFields
            return
        }
        let items = Self.topLevelItems(text)
        var seen = Set<String>()
        fields = items.compactMap { raw in
            let item = raw.trimmingCharacters(in: .whitespaces)
            guard !item.isEmpty else { return nil }
            let name = Self.name(of: item)
            guard seen.insert(name).inserted else { return nil }
            // Modifiers come before the braces; anything inside them belongs to the subfields.
            let head = item.prefix { $0 != "{" }
            var subfields: [String]?
            if let open = item.firstIndex(of: "{"), let close = item.lastIndex(of: "}"), open < close {
                subfields = Self.names(in: item[item.index(after: open)..<close])
            }
            return Field(name: name, modifiers: Self.modifiers(in: String(head)), subfields: subfields)
        }
    }

    /// The names at the top level of a braces' contents (`url,width` → `["url", "width"]`).
    private static func names(in text: Substring) -> [String] {
        topLevelItems(text).map { name(of: $0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty }
    }

    /// A field item's name: what comes before its modifiers or subfields.
    private static func name(of item: String) -> String {
        String(item.prefix { $0 != "." && $0 != "{" && $0 != "(" })
    }

    /// `text` split at the commas outside braces and parentheses, in one pass and without
    /// recursion, so no nesting of braces a client sends can exhaust the stack.
    private static func topLevelItems(_ text: some StringProtocol) -> [String] {
        var items: [String] = []
        var depth = 0
        var current = ""
        for character in text {
            switch character {
            case "{", "(": depth += 1
            case "}", ")": depth -= 1
            case "," where depth == 0:
                items.append(current)
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        items.append(current)
        return items
    }

    /// Collects `key(value)` pairs that follow dots, e.g. `.type(large).width(200)`.
    private static func modifiers(in item: String) -> [String: String] {
        var result: [String: String] = [:]
        for part in item.split(separator: ".").dropFirst() {
            guard let open = part.firstIndex(of: "("), let close = part.firstIndex(of: ")"), open < close else {
                continue
            }
            result[String(part[..<open])] = String(part[part.index(after: open)..<close])
        }
        return result
    }
}
