import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// One Easy Login attempt: the authorization URL to open, and what the app keeps to finish it
/// (state and PKCE verifier, RFC 7636). `LatchkeyClient` makes and keeps these; apps that drive
/// their own browser can use one directly.
public struct EasyLoginRequest: Sendable, Equatable, Codable {
    /// The server's `/v1/oauth/authorize` URL with every parameter.
    public private(set) var url: URL
    /// Where the server sends the answer; one of the client's registered redirect URIs.
    public let redirectURI: String
    /// The `client_id` registered on the server.
    public let clientID: String
    /// Echoed back on the redirect; checked before anything else.
    public let state: String
    /// PKCE verifier, sent only to the token endpoint.
    public let codeVerifier: String

    /// Builds a request with a fresh state and verifier.
    /// - Parameters:
    ///   - serverURL: the Latchkey server.
    ///   - clientID: the app's OAuth client id (`LATCHKEY_OAUTH_CLIENTS`).
    ///   - redirectURI: e.g. `myapp://auth`, or `http://127.0.0.1:PORT/callback` on a desktop.
    ///   - permissions: Facebook permissions beyond `public_profile`.
    ///   - fieldsMapping: Facebook field → user property; the server's default when `nil`.
    public init(
        serverURL: URL, clientID: String, redirectURI: String, permissions: [String] = [],
        fieldsMapping: [String: String]? = nil
    ) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.state = Nonce(length: 32).raw
        self.codeVerifier = PKCE.makeVerifier()
        let challenge = PKCE.challenge(for: codeVerifier)
        var pairs: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("state", state),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ("scope", (["public_profile"] + permissions.filter { $0 != "public_profile" }).joined(separator: " ")),
        ]
        if let fieldsMapping, !fieldsMapping.isEmpty {
            let text = fieldsMapping.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            pairs.append(("fields_mapping", text))
        }
        let authorize = serverURL.appendingPathComponent("v1/oauth/authorize").absoluteString
        url = URL(string: authorize + "?" + FormEncoding.encode(pairs)) ?? serverURL
    }

    /// The PKCE challenge in the URL, which a link request is bound to.
    var codeChallenge: String { PKCE.challenge(for: codeVerifier) }

    /// This request with `link_request` added (the same state and verifier): the server then links
    /// the Facebook identity to the handle's user when the code is redeemed with the verifier.
    func linking(_ linkRequest: String) -> EasyLoginRequest {
        var linked = self
        linked.url = URL(string: url.absoluteString + "&" + FormEncoding.encode([("link_request", linkRequest)])) ?? url
        return linked
    }

    /// Whether `url` is this request's redirect (same URI before the query).
    public func isRedirect(_ url: URL) -> Bool { Self.isRedirect(url, to: redirectURI) }

    /// Whether `url` is a redirect to `redirectURI` (same URI before the query).
    static func isRedirect(_ url: URL, to redirectURI: String) -> Bool {
        let text = url.absoluteString
        let base = text.split(separator: "?", maxSplits: 1).first.map(String.init) ?? text
        return LoopbackRedirect.matchKey(base) == LoopbackRedirect.matchKey(redirectURI)
    }

    /// Whether `url` carries this request's `state` (compared in constant time).
    func carriesState(_ url: URL) -> Bool { carriesState(Self.parameters(of: url)) }

    private func carriesState(_ parameters: [String: String]) -> Bool {
        guard let returned = parameters["state"] else { return false }
        return ConstantTime.equals(returned, state)
    }

    private static func parameters(of url: URL) -> [String: String] {
        FormEncoding.decode(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "")
    }

    /// Reads the redirect: the authorization code, or the error as a `LatchkeyError`.
    /// - Parameter issuer: the server's URL; an `iss` naming another server is refused (RFC 9207).
    /// - Throws: `user_cancelled` for a cancel, the server's code for its own failures,
    ///   `state_mismatch`, `issuer_mismatch` or `invalid_response` otherwise.
    public func code(from redirect: URL, issuer: URL) throws(LatchkeyError) -> String {
        guard isRedirect(redirect) else {
            throw LatchkeyError.sdk(.invalidResponse, "This URL is not the Easy Login redirect.")
        }
        let parameters = Self.parameters(of: redirect)
        guard carriesState(parameters) else {
            throw LatchkeyError.sdk(.stateMismatch, "The login answer does not belong to this request.")
        }
        // RFC 9207 §2.4: Latchkey always sends `iss`, so an answer without one is refused too.
        guard let iss = parameters["iss"], Self.trimmed(iss) == Self.trimmed(issuer.absoluteString) else {
            throw LatchkeyError.sdk(.issuerMismatch, "The login answer came from another server.")
        }
        if let error = parameters["error"] {
            let message = parameters["error_description"] ?? error
            if let code = parameters["error_code"], !code.isEmpty {
                throw LatchkeyError(
                    code: ErrorCode(rawValue: code), message: message, linkTicket: parameters["link_ticket"])
            }
            if error == "access_denied" { throw LatchkeyError.sdk(.userCancelled, "The login was cancelled.") }
            throw LatchkeyError.sdk(ErrorCode(rawValue: error), message)
        }
        guard let code = parameters["code"], !code.isEmpty else {
            throw LatchkeyError.sdk(.invalidResponse, "The login answer carries no code.")
        }
        return code
    }

    private static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
}

extension EasyLoginRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The client and redirect; never the state or the PKCE verifier (they would end up in logs).
    public var description: String {
        "EasyLoginRequest(clientID: \(clientID), redirectURI: \(redirectURI), state and verifier: <redacted>)"
    }
    /// Same as `description`.
    public var debugDescription: String { description }
    /// What `dump` and debuggers show: the secrets left out.
    public var customMirror: Mirror { Mirror(self, children: ["clientID": clientID, "redirectURI": redirectURI]) }
}
