import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// Renders a person for one app, exactly as far as the grant allows: Graph fields for `/me` and
/// claims for id tokens. Everything here is pure, so the gating is easy to test and reason about.
struct ProfileRenderer: Sendable {
    let person: Person
    let appID: String
    let grant: Grant
    let baseURL: String
    /// Friends who use the app and granted `user_friends`, already app-scoped: (id, name).
    let appFriends: [(id: String, name: String)]
    /// The business the app belongs to: `token_for_business` is the same for the person across
    /// its apps; `nil` makes that field an error.
    var business: String? = nil

    var scopedID: String { EmulatorState.appScopedID(appID: appID, personKey: person.key) }

    private func allowed(_ permission: String) -> Bool { grant.granted.contains(permission) }

    /// The picture URL: the person's own, or the emulator's generated one.
    func pictureURL(width: Int = 50, height: Int = 50) -> String {
        person.picture ?? "\(baseURL)/platform/profilepic/?asid=\(scopedID)&height=\(height)&width=\(width)"
    }

    /// Graph fields. Unknown fields throw Facebook's error; fields without their permission are
    /// silently left out, as Facebook leaves out `email`.
    func graphFields(_ selection: FieldSelection) throws -> JSONValue {
        var result: [String: JSONValue] = [:]
        for field in selection.fields {
            guard Permissions.graphUserFields.contains(field.name) else {
                throw GraphError(
                    message: "(#100) Tried accessing nonexisting field (\(field.name)) on node type (User)", code: 100)
            }
            if let permission = Permissions.graphField[field.name], !allowed(permission) { continue }
            if let value = try graphValue(field) { result[field.name] = value }
        }
        // Graph always includes the id of the node, asked for or not.
        result["id"] = .string(scopedID)
        return .object(result)
    }

    private func graphValue(_ field: FieldSelection.Field) throws -> JSONValue? {
        switch field.name {
        case "id": return .string(scopedID)
        case "name": return .string(person.name)
        case "first_name": return person.firstName.map(JSONValue.string)
        case "middle_name": return person.middleName.map(JSONValue.string)
        case "last_name": return person.lastName.map(JSONValue.string)
        case "short_name": return .string(person.firstName ?? person.name)
        case "name_format": return .string("{first} {last}")
        case "email": return person.email.map(JSONValue.string)
        case "birthday": return person.birthday.map(JSONValue.string)
        case "gender": return person.gender.map(JSONValue.string)
        case "link": return .string(person.link ?? "https://www.facebook.com/app_scoped_user_id/\(scopedID)/")
        case "location": return person.location.map(Self.place)
        case "hometown": return person.hometown.map(Self.place)
        case "age_range": return person.ageRange.map(Self.ageRange)
        case "installed": return true
        case "token_for_business":
            // Facebook documents only that the call "returns an error" for an app outside any
            // Business Manager; the wording and code here are ours (a Graph method error).
            guard let business else {
                throw GraphError(
                    message: "(#100) token_for_business requires the app to be associated with a Business Manager",
                    type: "GraphMethodException", code: 100)
            }
            return .string(Self.tokenForBusiness(business: business, personKey: person.key))
        case "picture": return ["data": try picture(field.modifiers, fields: field.subfields)]
        case "friends":
            let limit = field.modifiers["limit"].flatMap(Int.init) ?? appFriends.count
            return [
                "data": .array(
                    appFriends.prefix(max(0, limit)).map { ["id": .string($0.id), "name": .string($0.name)] }),
                "summary": ["total_count": .int(person.friends.count)],
            ]
        case "permissions": return ["data": .array(permissionEntries())]
        default: return nil
        }
    }

    /// A person's `token_for_business` in `business`: opaque, the same from every app of the
    /// business, different across businesses and people (and not an id Graph accepts).
    static func tokenForBusiness(business: String, personKey: String) -> String {
        let digest = SHA256.hash(data: Data("tfb:\(business):\(personKey)".utf8))
        return Base64URL.encode(Data(digest.prefix(18)))
    }

    /// The picture's size for `type` (`small` 50, `normal` 100, `large` 200), `width` and `height`.
    static func pictureSize(_ modifiers: [String: String]) -> (width: Int, height: Int) {
        let side: Int
        switch modifiers["type"] {
        case "large": side = 200
        case "normal": side = 100
        default: side = 50
        }
        return (
            min(max(modifiers["width"].flatMap(Int.init) ?? side, 1), 2048),
            min(max(modifiers["height"].flatMap(Int.init) ?? side, 1), 2048)
        )
    }

    /// A `ProfilePictureSource` (`height`, `is_silhouette`, `url`, `width`) for `type`, `width`
    /// and `height`, limited to `fields` when the request named them (`picture{url}`), as the
    /// `picture` field's `data` and the picture edge's `redirect=false` answer carry it.
    func picture(_ modifiers: [String: String], fields: [String]? = nil) throws -> JSONValue {
        let (width, height) = Self.pictureSize(modifiers)
        let source: [String: JSONValue] = [
            "height": .int(height), "width": .int(width), "is_silhouette": .bool(person.picture == nil),
            "url": .string(pictureURL(width: width, height: height)),
        ]
        guard let fields else { return .object(source) }
        var selected: [String: JSONValue] = [:]
        for name in fields {
            guard let value = source[name] else {
                throw GraphError(
                    message: "(#100) Tried accessing nonexisting field (\(name)) on node type (ProfilePictureSource)",
                    code: 100)
            }
            selected[name] = value
        }
        return .object(selected)
    }

    /// `/me/permissions` entries, granted first, in a stable order.
    func permissionEntries() -> [JSONValue] {
        grant.granted.sorted().map { ["permission": .string($0), "status": "granted"] }
            + grant.declined.sorted().map { ["permission": .string($0), "status": "declined"] }
    }

    /// Limited Login profile claims (§7.2), each behind its permission.
    func idTokenClaims() -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        if allowed("public_profile") {
            claims["name"] = .string(person.name)
            claims["given_name"] = person.firstName.map(JSONValue.string)
            claims["middle_name"] = person.middleName.map(JSONValue.string)
            claims["family_name"] = person.lastName.map(JSONValue.string)
            claims["picture"] = .string(pictureURL(width: 100, height: 100))
        }
        if allowed("email"), let email = person.email { claims["email"] = .string(email) }
        if allowed("user_friends") { claims["user_friends"] = .array(appFriends.map { .string($0.id) }) }
        if allowed("user_birthday"), let birthday = person.birthday { claims["user_birthday"] = .string(birthday) }
        if allowed("user_age_range"), let range = person.ageRange { claims["user_age_range"] = Self.ageRange(range) }
        if allowed("user_hometown"), let place = person.hometown { claims["user_hometown"] = Self.place(place) }
        if allowed("user_location"), let place = person.location { claims["user_location"] = Self.place(place) }
        if allowed("user_gender"), let gender = person.gender { claims["user_gender"] = .string(gender) }
        if allowed("user_link") {
            claims["user_link"] = .string(person.link ?? "https://www.facebook.com/app_scoped_user_id/\(scopedID)/")
        }
        return claims
    }

    static func place(_ place: Person.Place) -> JSONValue { ["id": .string(place.id), "name": .string(place.name)] }

    static func ageRange(_ range: Person.AgeRange) -> JSONValue {
        var members: [String: JSONValue] = [:]
        if let min = range.min { members["min"] = .int(min) }
        if let max = range.max { members["max"] = .int(max) }
        return .object(members)
    }
}
