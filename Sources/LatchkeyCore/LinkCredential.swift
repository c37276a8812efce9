import Foundation
import LatchkeyAPI

/// An identity to add to the signed-in user with ``LatchkeyClient/link(with:)``: a Facebook
/// credential or what Sign in with Apple gave, as `client.link(with: .apple(credential, rawNonce: nonce.raw))`.
///
/// A struct with factories rather than an enum, as ``FacebookCredential`` is, so that a provider
/// added later never breaks an app's `switch`.
public struct LinkCredential: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case facebook(FacebookCredential, fieldsMapping: [String: String]?)
        case apple(AppleExchangeRequest)
    }

    let kind: Kind

    /// A Facebook credential (``LatchkeyClient/link(with:fieldsMapping:)`` says the same more briefly).
    /// - Parameters:
    ///   - credential: the access token or Limited Login id token.
    ///   - fieldsMapping: Facebook field → user property; the server's default when `nil`.
    public static func facebook(
        _ credential: FacebookCredential, fieldsMapping: [String: String]? = nil
    ) -> LinkCredential {
        LinkCredential(kind: .facebook(credential, fieldsMapping: fieldsMapping))
    }

    /// What Sign in with Apple gave, with the raw nonce whose SHA-256 hex was the request's `nonce`
    /// (the name is forwarded when Apple shared it, as at a sign-in).
    public static func apple(_ credential: AppleIDCredential, rawNonce: String) -> LinkCredential {
        LinkCredential(kind: .apple(credential.request(rawNonce: rawNonce)))
    }

    /// The body of `POST /v1/users/me/identities`: a Facebook credential as `POST /v1/auth/facebook`
    /// takes it, with no `provider` (the server's default, and the body the SDK sent before Apple),
    /// an Apple one as `POST /v1/auth/apple` takes it plus `"provider": "apple"`.
    var body: JSONValue {
        switch kind {
        case .facebook(let credential, let fieldsMapping):
            return credential.request(fieldsMapping: fieldsMapping).json
        case .apple(let request):
            guard case .object(var fields) = request.json else { return request.json }
            fields["provider"] = .string("apple")
            return .object(fields)
        }
    }
}
