import Foundation
@_exported import LatchkeyCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's default transport: Foundation's `URLSession`.
///
/// `import Latchkey` brings the whole SDK (`LatchkeyCore`, re-exported) with this transport;
/// programs with their own HTTP client import `LatchkeyCore` and bring a `LatchkeyTransport`.
public struct URLSessionTransport: LatchkeyTransport {
    /// The session requests go through.
    public let session: URLSession

    /// A transport over `session`.
    public init(session: URLSession = .shared) { self.session = session }

    /// Sends `request`; any HTTP status is an answer, a failure to get one throws.
    public func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = request.timeout
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return LatchkeyHTTPResponse(status: http.statusCode, body: data)
    }
}

extension LatchkeyConfiguration {
    /// Creates a configuration whose requests go through `urlSession` (by default `.shared`).
    public init(
        serverURL: URL, facebookAppID: String, credentialStore: any CredentialStore = InMemoryCredentialStore(),
        refreshLeeway: TimeInterval = 60, urlSession: URLSession = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }, oauthClientID: String? = nil, redirectURI: String? = nil
    ) {
        self.init(
            serverURL: serverURL, facebookAppID: facebookAppID, credentialStore: credentialStore,
            refreshLeeway: refreshLeeway, transport: URLSessionTransport(session: urlSession), clock: clock,
            oauthClientID: oauthClientID, redirectURI: redirectURI)
    }
}

extension IDTokenValidator {
    /// Fetches Facebook's JWKS (or an emulator's) through `session` and builds a validator.
    public static func fetch(
        appID: String, jwksURL: URL, session: URLSession = .shared
    ) async throws(LatchkeyError) -> IDTokenValidator {
        try await fetch(appID: appID, jwksURL: jwksURL, transport: URLSessionTransport(session: session))
    }
}
