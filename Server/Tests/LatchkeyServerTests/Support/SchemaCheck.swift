import LatchkeyAPI

/// Checks a JSON value against the subset of JSON Schema that docs/openapi.json uses (`type`,
/// `enum`, `const`, `required`, `properties`, `additionalProperties`, `items`, `minItems`,
/// `minimum`, `maxProperties`, `allOf`, `oneOf`, `not`, `$ref` into `components/schemas`), so the
/// Swift suite can hold real answers to the document without a Python validator. Unknown keywords
/// fail loudly rather than pass silently.
struct SchemaCheck {
    let document: JSONValue

    /// Every violation, as `path: problem`; empty when `value` conforms.
    func violations(_ value: JSONValue, _ schema: JSONValue, at path: String = "$") -> [String] {
        guard let rules = schema.objectValue else { return ["\(path): schema is not an object"] }
        var found: [String] = []
        for (keyword, rule) in rules {
            switch keyword {
            case "$ref":
                let name = rule.stringValue?.split(separator: "/").last.map(String.init) ?? ""
                guard let target = document["components"]?["schemas"]?[name] else {
                    found.append("\(path): unknown $ref \(rule)")
                    continue
                }
                found += violations(value, target, at: path)
            case "type":
                // One type, or a list of them (`["string", "null"]`).
                let types = rule.arrayValue?.compactMap(\.stringValue) ?? [rule.stringValue ?? ""]
                if !types.contains(where: { Self.has(type: $0, value) }) { found.append("\(path): not a \(rule)") }
            case "enum":
                if !(rule.arrayValue ?? []).contains(value) { found.append("\(path): \(value) not in \(rule)") }
            case "const":
                if value != rule { found.append("\(path): \(value) is not \(rule)") }
            case "required":
                for name in rule.arrayValue ?? [] where value[name.stringValue ?? ""] == nil {
                    found.append("\(path): missing \(name)")
                }
            case "properties":
                for (name, property) in rule.objectValue ?? [:] {
                    if let member = value[name] { found += violations(member, property, at: "\(path).\(name)") }
                }
            case "additionalProperties":
                let known = Set((rules["properties"]?.objectValue ?? [:]).keys)
                for (name, member) in value.objectValue ?? [:] where !known.contains(name) {
                    if rule == .bool(false) {
                        found.append("\(path): unexpected member \(name)")
                    } else if rule.isObject {
                        found += violations(member, rule, at: "\(path).\(name)")
                    }
                }
            case "items":
                for (index, item) in (value.arrayValue ?? []).enumerated() {
                    found += violations(item, rule, at: "\(path)[\(index)]")
                }
            case "minItems":
                if (value.arrayValue?.count ?? 0) < (rule.intValue ?? 0) { found.append("\(path): too few items") }
            case "minimum":
                if let number = value.intValue, number < (rule.intValue ?? 0) { found.append("\(path): below minimum") }
            case "maxProperties":
                if (value.objectValue?.count ?? 0) > (rule.intValue ?? 0) { found.append("\(path): too many members") }
            case "allOf":
                for part in rule.arrayValue ?? [] { found += violations(value, part, at: path) }
            case "oneOf":
                let passing = (rule.arrayValue ?? []).filter { violations(value, $0, at: path).isEmpty }.count
                if passing != 1 { found.append("\(path): matches \(passing) of oneOf") }
            case "not":
                if violations(value, rule, at: path).isEmpty { found.append("\(path): matches a 'not' schema") }
            case "description", "maxLength", "minLength", "pattern":
                continue
            default:
                found.append("\(path): keyword \(keyword) not supported by SchemaCheck")
            }
        }
        return found
    }

    static func has(type: String, _ value: JSONValue) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null),
            ("integer", .int), ("number", .int), ("number", .double):
            true
        default: false
        }
    }
}
