import LatchkeyAPI

/// How one Graph request reached the emulator, kept so tests can check what a backend really
/// sends: for example that an app secret never sits in a URL, where proxies and APM tools log it.
public struct RecordedRequest: Sendable, Equatable {
    /// How many requests the emulator keeps (the oldest are dropped first).
    static let retained = 500

    /// `GET`, `POST`, …
    public var method: String
    /// The path as sent, version prefix included.
    public var path: String
    /// The raw query string, `""` when none.
    public var query: String
    /// The endpoint template it matched (as in `/_emulator/calls`).
    public var endpoint: String
    /// The scheme of the `Authorization` header (`Bearer`, `OAuth`), `nil` without one; the
    /// credential itself is not kept.
    public var authorizationScheme: String?

    /// The control API's JSON form.
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "method": .string(method), "path": .string(path), "query": .string(query), "endpoint": .string(endpoint),
        ]
        if let authorizationScheme { object["authorization_scheme"] = .string(authorizationScheme) }
        return .object(object)
    }
}
