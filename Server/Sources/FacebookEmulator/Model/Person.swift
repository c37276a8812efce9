import LatchkeyAPI

/// A person who can log in through the emulator: a seeded demo user or a test user.
///
/// A person has one profile but a different app-scoped id in every app, as on Facebook.
public struct Person: Sendable, Codable, Equatable {
    /// A place as Graph returns it (`location`, `hometown`).
    public struct Place: Sendable, Codable, Equatable {
        /// Page id of the place.
        public var id: String
        /// Display name, e.g. "Lisbon, Portugal".
        public var name: String
        /// Creates a place.
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// An age bracket as Graph returns it; `max` is absent for 21+.
    public struct AgeRange: Sendable, Codable, Equatable {
        /// Lower bound.
        public var min: Int?
        /// Upper bound, absent for the open-ended bracket.
        public var max: Int?
        /// Creates an age range.
        public init(min: Int?, max: Int?) {
            self.min = min
            self.max = max
        }
    }

    /// The emulator-wide handle of the person (not an app-scoped id): used in seeds and controls.
    public var key: String
    /// Full name.
    public var name: String
    /// Given name.
    public var firstName: String?
    /// Middle name.
    public var middleName: String?
    /// Family name.
    public var lastName: String?
    /// Email; some Facebook users have none, so this is optional.
    public var email: String?
    /// `MM/DD/YYYY`, Facebook's format.
    public var birthday: String?
    /// Gender as free text.
    public var gender: String?
    /// Profile link.
    public var link: String?
    /// Picture URL; when absent the emulator serves a generated one.
    public var picture: String?
    /// Current city.
    public var location: Place?
    /// Home town.
    public var hometown: Place?
    /// Age bracket.
    public var ageRange: AgeRange?
    /// Keys of friends.
    public var friends: [String]
    /// Password returned by the test-user API.
    public var password: String?
    /// The app that created this person through the test-user API, if any.
    public var testUserOf: String?

    /// Creates a person.
    public init(
        key: String, name: String, firstName: String? = nil, middleName: String? = nil, lastName: String? = nil,
        email: String? = nil, birthday: String? = nil, gender: String? = nil, link: String? = nil,
        picture: String? = nil, location: Place? = nil, hometown: Place? = nil, ageRange: AgeRange? = nil,
        friends: [String] = [], password: String? = nil, testUserOf: String? = nil
    ) {
        self.key = key
        self.name = name
        self.firstName = firstName
        self.middleName = middleName
        self.lastName = lastName
        self.email = email
        self.birthday = birthday
        self.gender = gender
        self.link = link
        self.picture = picture
        self.location = location
        self.hometown = hometown
        self.ageRange = ageRange
        self.friends = friends
        self.password = password
        self.testUserOf = testUserOf
    }

    enum CodingKeys: String, CodingKey {
        case key, name, email, birthday, gender, link, picture, location, hometown, friends, password
        case firstName = "first_name"
        case middleName = "middle_name"
        case lastName = "last_name"
        case ageRange = "age_range"
        case testUserOf = "test_user_of"
    }

    /// Decodes a seed entry; `first_name`/`last_name` default to the parts of `name`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .name)
        let parts = name.split(separator: " ").map(String.init)
        self.init(
            key: try c.decode(String.self, forKey: .key),
            name: name,
            firstName: try c.decodeIfPresent(String.self, forKey: .firstName) ?? parts.first,
            middleName: try c.decodeIfPresent(String.self, forKey: .middleName),
            lastName: try c.decodeIfPresent(String.self, forKey: .lastName) ?? (parts.count > 1 ? parts.last : nil),
            email: try c.decodeIfPresent(String.self, forKey: .email),
            birthday: try c.decodeIfPresent(String.self, forKey: .birthday),
            gender: try c.decodeIfPresent(String.self, forKey: .gender),
            link: try c.decodeIfPresent(String.self, forKey: .link),
            picture: try c.decodeIfPresent(String.self, forKey: .picture),
            location: try c.decodeIfPresent(Place.self, forKey: .location),
            hometown: try c.decodeIfPresent(Place.self, forKey: .hometown),
            ageRange: try c.decodeIfPresent(AgeRange.self, forKey: .ageRange),
            friends: try c.decodeIfPresent([String].self, forKey: .friends) ?? [],
            password: try c.decodeIfPresent(String.self, forKey: .password),
            testUserOf: try c.decodeIfPresent(String.self, forKey: .testUserOf)
        )
    }
}
