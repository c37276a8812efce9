import HTTPTypes
import LatchkeyAPI
import NIOCore

/// Facebook field → user property mapping (the Backendless `fieldsMapping`), validated and applied.
struct FieldMapping: Sendable, Equatable {
    /// Facebook user fields that can be mapped; anything else is refused.
    static let facebookFields: Set<String> = [
        "id", "name", "first_name", "middle_name", "last_name", "email", "picture", "birthday", "gender", "link",
        "location", "hometown", "age_range", "friends",
    ]

    /// Property names the server owns.
    static let reservedProperties: Set<String> = [
        "id", "created", "updated", "createdat", "updatedat", "identities", "disabled", "objectid", "sessions",
        "password",
    ]

    let entries: [String: String]

    /// Checks one entry: a known Facebook field onto a safe property name.
    static func validate(field: String, property: String) throws {
        guard facebookFields.contains(field) else {
            throw APIError.invalidRequest(
                "'\(field)' is not a mappable Facebook field; use one of \(facebookFields.sorted().joined(separator: ", "))"
            )
        }
        if let problem = propertyProblem(property) { throw APIError.invalidRequest(problem) }
    }

    /// Checks a property name of a configured mapping (`setting`), as `validate` does a client's.
    static func validateProperty(_ property: String, setting: String) throws {
        if let problem = propertyProblem(property) { throw ConfigurationError("\(setting): \(problem)") }
    }

    /// What is wrong with `property` as a property name, or `nil`.
    private static func propertyProblem(_ property: String) -> String? {
        guard let first = property.unicodeScalars.first, first.isASCIILetter || first == "_",
            property.count <= 64,
            property.unicodeScalars.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" })
        else {
            return
                "Property name '\(property.prefix(64))' must start with a letter or _ and use only letters, digits and _ (at most 64)"
        }
        guard !reservedProperties.contains(property.lowercased()) else {
            return "Property name '\(property)' is reserved"
        }
        return nil
    }

    /// A request's mapping, checked against the configuration's allowed properties.
    init(request: [String: String], allowed: Set<String>?) throws {
        guard request.count <= FieldMapping.facebookFields.count else {
            throw APIError.invalidRequest("fieldsMapping has too many entries")
        }
        for (field, property) in request {
            try Self.validate(field: field, property: property)
            if let allowed, !allowed.contains(property) {
                throw APIError(
                    .forbidden, .propertyNotWritable, "Clients may not map onto property '\(property)'")
            }
        }
        entries = request
    }

    init(trusted entries: [String: String]) { self.entries = entries }

    /// The Graph `fields` needed to fill this mapping (always with `id` and `permissions`).
    var graphFields: String {
        var fields = ["id", "permissions"]
        for field in Set(entries.keys).subtracting(["id"]).sorted() {
            fields.append(field == "picture" ? "picture.type(large)" : field)
        }
        return fields.joined(separator: ",")
    }

    /// The properties this mapping produces from a normalized profile; absent fields produce nothing.
    func apply(to profile: [String: JSONValue]) -> [String: JSONValue] {
        var properties: [String: JSONValue] = [:]
        for (field, property) in entries {
            if let value = profile[field], value != .null { properties[property] = value }
        }
        return properties
    }

    /// Flattens Graph's nested shapes the way users expect them stored: `picture` → URL,
    /// `location`/`hometown` → name, `friends` → ids, `age_range` → `{min, max}`.
    static func normalizeGraph(_ me: [String: JSONValue]) -> [String: JSONValue] {
        var profile: [String: JSONValue] = [:]
        for (field, value) in me where facebookFields.contains(field) {
            switch field {
            case "picture": profile[field] = value["data"]?["url"] ?? value
            case "location", "hometown": profile[field] = value["name"] ?? value
            case "friends":
                profile[field] = .array((value["data"]?.arrayValue ?? []).compactMap { $0["id"] })
            default: profile[field] = value
            }
        }
        return profile
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
