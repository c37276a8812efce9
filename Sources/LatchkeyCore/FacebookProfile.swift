import Foundation
import LatchkeyAPI

/// The person described by a Limited Login id token (the Facebook SDK's `Profile`), each field
/// present only when its permission was granted.
public struct FacebookProfile: Sendable, Equatable {
    /// A place (`user_location`, `user_hometown`).
    public struct Place: Sendable, Equatable {
        /// Page id.
        public let id: String?
        /// Display name.
        public let name: String
    }

    /// App-scoped user id (`sub`).
    public let userID: String
    /// Full name.
    public let name: String?
    /// Given name.
    public let firstName: String?
    /// Middle name.
    public let middleName: String?
    /// Family name.
    public let lastName: String?
    /// Email (`email` permission).
    public let email: String?
    /// Picture URL.
    public let imageURL: URL?
    /// App-scoped ids of friends who use the app (`user_friends`).
    public let friendIDs: [String]?
    /// Birthday as Facebook writes it, `MM/dd/yyyy` (or `MM/dd`, `yyyy`).
    public let birthday: String?
    /// Age range bounds (`user_age_range`).
    public let ageRange: ClosedRange<Int>?
    /// Minimum age when the range is open-ended (21+).
    public let minimumAge: Int?
    /// Gender.
    public let gender: String?
    /// Current city.
    public let location: Place?
    /// Home town.
    public let hometown: Place?
    /// Profile link.
    public let link: URL?

    /// Reads the profile claims of an id token's payload.
    init(claims: JSONValue) {
        func string(_ key: String) -> String? { claims[key]?.stringValue }
        func place(_ key: String) -> Place? {
            guard let value = claims[key], let name = value["name"]?.stringValue else { return nil }
            return Place(id: value["id"]?.stringValue, name: name)
        }
        userID = string("sub") ?? ""
        name = string("name")
        firstName = string("given_name")
        middleName = string("middle_name")
        lastName = string("family_name")
        email = string("email")
        imageURL = string("picture").flatMap(URL.init(string:))
        friendIDs = claims["user_friends"]?.arrayValue?.compactMap(\.stringValue)
        birthday = string("user_birthday")
        let min = claims["user_age_range"]?["min"]?.intValue
        let max = claims["user_age_range"]?["max"]?.intValue
        if let min, let max, min <= max { ageRange = min...max } else { ageRange = nil }
        minimumAge = min
        gender = string("user_gender")
        location = place("user_location")
        hometown = place("user_hometown")
        link = string("user_link").flatMap(URL.init(string:))
    }
}

/// The former name, kept for one release. It collides with the Facebook SDK's `Profile` in a file
/// that imports both (write `FBSDKCoreKit.Profile` for theirs until it goes); use ``FacebookProfile``.
@available(*, deprecated, renamed: "FacebookProfile")
public typealias Profile = FacebookProfile
