import Foundation
import LatchkeyAPI
import LatchkeyCore
import Synchronization

/// A Latchkey server in memory, as far as a test asks: each `METHOD /path` answers what the test
/// scripted (the rest `404 not_found`), and every request is kept to be read back.
final class FakeServer: LatchkeyTransport {
    /// One request as the server received it.
    struct Received: Sendable {
        let method: String
        let path: String
        let bearer: String?
        let body: JSONValue?
    }

    /// A scripted answer.
    struct Answer: Sendable {
        let status: Int
        let body: Data

        static func json(_ value: some Encodable, status: Int = 200) -> Answer {
            // Encoding the SDK's own wire types cannot fail; an empty body would fail the test loudly.
            Answer(status: status, body: (try? JSONEncoder().encode(value)) ?? Data())
        }

        static func error(_ code: ErrorCode, status: Int, linkTicket: String? = nil) -> Answer {
            json(ErrorBody(code: code, message: "scripted \(code)", linkTicket: linkTicket), status: status)
        }
    }

    static let url = URL(string: "https://auth.example.com")!
    /// A fixed clock: tokens issued by the fake never expire during a test.
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    private let answers: Mutex<[String: Answer]>
    private let received = Mutex<[Received]>([])

    init(_ answers: [String: Answer] = [:]) {
        self.answers = Mutex(answers)
    }

    /// Scripts (or replaces) the answer to `route` (`"POST /v1/auth/apple"`).
    func answer(_ route: String, with answer: Answer) { answers.withLock { $0[route] = answer } }

    /// The requests received so far, in order.
    var requests: [Received] { received.withLock { $0 } }

    /// The requests to `route` (`"POST /v1/auth/apple"`).
    func requests(to route: String) -> [Received] { requests.filter { "\($0.method) \($0.path)" == route } }

    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        let bearer = request.headers.first { $0.name == "Authorization" }.map {
            String($0.value.dropFirst("Bearer ".count))
        }
        let body = try request.body.map { try JSONValue.decode($0) }
        let path = request.url.path
        received.withLock {
            $0.append(Received(method: request.method, path: path, bearer: bearer, body: body))
        }
        let answer = answers.withLock { $0["\(request.method) \(path)"] } ?? .error(.notFound, status: 404)
        return LatchkeyHTTPResponse(status: answer.status, body: answer.body)
    }

    /// A client over this server, with a store in memory and the fixed clock.
    func client() -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: Self.url, facebookAppID: "1234567890", credentialStore: InMemoryCredentialStore(),
                transport: self, clock: { Self.now }))
    }

    /// A sign-in's answer for `userID`, with a fresh session.
    static func signIn(
        _ userID: String, identities: [IdentityBody] = [], isNewUser: Bool = true, isAnonymous: Bool = false
    ) -> Answer {
        .json(
            SignInBody(
                user: UserBody(
                    id: userID, properties: [:], identities: identities, createdAt: 0, isAnonymous: isAnonymous),
                isNewUser: isNewUser, grantedPermissions: [], declinedPermissions: [],
                session: SessionBody(
                    accessToken: "access-\(userID)", expiresIn: 900, refreshToken: "refresh-\(userID)",
                    refreshTokenExpiresIn: 86400)))
    }

    /// An identity change's answer (`{"user"}`).
    static func user(_ userID: String, identities: [IdentityBody]) -> Answer {
        .json(UserAnswerBody(user: UserBody(id: userID, properties: [:], identities: identities, createdAt: 0)))
    }
}
