import LatchkeyAPI

extension EmulatorSeed {
    /// The business both demo apps belong to, so a person's two app-scoped ids share one
    /// `token_for_business`.
    public static let demoBusiness = "300000000000001"

    /// The demo world `latchkey emulator` starts with when no seed file is given: two apps of one
    /// business and four people who cover the awkward cases (no email, partial birthday, friends).
    public static let demo = EmulatorSeed(
        apps: [
            EmulatorApp(
                id: "100000000000001", secret: "demo-app-secret-change-me", name: "Latchkey Demo",
                redirectURIs: [
                    "http://127.0.0.1:8080/v1/oauth/facebook/callback",
                    "http://localhost:8080/v1/oauth/facebook/callback",
                    "latchkeydemo://auth",
                ], business: demoBusiness),
            EmulatorApp(
                id: "100000000000002", secret: "second-app-secret-change-me", name: "Latchkey Second App",
                redirectURIs: [], requireAppSecretProof: true, business: demoBusiness),
        ],
        users: [
            SeededPerson(
                person: Person(
                    key: "alice", name: "Alice Liddell", firstName: "Alice", lastName: "Liddell",
                    email: "alice@example.com", birthday: "05/04/1992", gender: "female",
                    link: "https://www.facebook.com/alice.liddell",
                    location: .init(id: "106078429431815", name: "London, United Kingdom"),
                    hometown: .init(id: "104004246303794", name: "Oxford, United Kingdom"),
                    ageRange: .init(min: 21, max: nil), friends: ["bob"], password: "alice-password"),
                grants: [:]),
            SeededPerson(
                person: Person(
                    key: "bob", name: "Bob Marley Smith", firstName: "Bob", middleName: "Marley", lastName: "Smith",
                    email: "bob@example.com", birthday: "12/24", gender: "male",
                    location: .init(id: "110714572282163", name: "Kingston, Jamaica"),
                    ageRange: .init(min: 18, max: 20), friends: ["alice"], password: "bob-password")),
            SeededPerson(
                person: Person(
                    key: "carol", name: "Carol Nomail", firstName: "Carol", lastName: "Nomail", birthday: "1985",
                    ageRange: .init(min: 21, max: nil), password: "carol-password")),
            SeededPerson(
                person: Person(
                    key: "dave", name: "Dave Teen", firstName: "Dave", lastName: "Teen", email: "dave@example.com",
                    birthday: "03/15/2011", gender: "male", ageRange: .init(min: 13, max: 17), password: "dave-password"
                )),
        ]
    )
}
