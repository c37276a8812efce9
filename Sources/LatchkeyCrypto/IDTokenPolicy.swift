import Foundation

/// What a Limited Login id token must satisfy beyond its signature: the one place where the
/// server and the SDK differ, passed to the one set of claim checks (`LimitedLoginToken.claims`).
public struct IDTokenPolicy: Sendable {
    /// Which `iss` values are accepted.
    public enum IssuerRule: Sendable, Equatable {
        /// Exactly one of these strings: the server's rule, configurable by the operator (Parse,
        /// Supabase and allauth accept only `https://www.facebook.com`).
        case oneOf([String])
        /// An `https` URL whose host is `facebook.com` or ends in `.facebook.com`: the iOS SDK's
        /// rule since v12.2 (facebook-protocol.md §7.3), which survives a move to `limited.`.
        case facebookHost
    }

    /// How the `nonce` claim must relate to the nonce sent beside the token.
    public enum NonceMatching: String, Sendable, Equatable, CaseIterable {
        /// The claim is the SHA-256 hex of the nonce sent (Firebase's convention, and the SDK's):
        /// the raw value never travels where the token does, so an intercepted token alone signs
        /// nobody in (its claim, sent as the nonce, hashes to something else).
        case hashed
        /// The claim is the nonce sent, verbatim: safe only when the nonce is one the server
        /// issued and spends (whoever holds the token holds its claim).
        case raw
        /// Either: for apps moving from one convention to the other.
        case either
    }

    /// Accepted issuers.
    public var issuer: IssuerRule
    /// App ids the token may be issued to; `aud` is a string or an array (RFC 7519 §4.1.3) and
    /// one of its entries must be here.
    public var audiences: Set<String>
    /// Tolerated clock difference, applied to `exp`, to an `iat` in the future and to `maximumAge`.
    public var clockSkew: TimeInterval
    /// How long after `iat` a token is still taken: Facebook's SDKs allow ten minutes.
    public var maximumAge: TimeInterval
    /// Whether a token without a nonce is taken when the caller sent none either (an operator's
    /// opt-in for apps that cannot send one; never the default).
    public var allowsMissingNonce: Bool
    /// How the claim must match the nonce sent: `hashed` unless said otherwise; `either` on the
    /// device, which holds both values and only checks what the server checks again.
    public var nonceMatching: NonceMatching

    /// A policy with every rule spelled out.
    public init(
        issuer: IssuerRule, audiences: Set<String>, clockSkew: TimeInterval, maximumAge: TimeInterval,
        allowsMissingNonce: Bool = false, nonceMatching: NonceMatching = .hashed
    ) {
        self.issuer = issuer
        self.audiences = audiences
        self.clockSkew = clockSkew
        self.maximumAge = maximumAge
        self.allowsMissingNonce = allowsMissingNonce
        self.nonceMatching = nonceMatching
    }

    /// The on-device policy: Facebook's SDK rules (issuer host, ten minutes since `iat`) with a
    /// minute of skew, because a phone's clock drifts and the server checks the token again anyway;
    /// a false refusal on the device would stop a login the server would take.
    public static func device(appID: String, maximumAge: TimeInterval = 600) -> IDTokenPolicy {
        IDTokenPolicy(
            issuer: .facebookHost, audiences: [appID], clockSkew: 60, maximumAge: maximumAge, nonceMatching: .either)
    }

    /// Whether `issuer` passes the rule.
    func accepts(issuer: String) -> Bool {
        switch self.issuer {
        case .oneOf(let accepted):
            return accepted.contains(issuer)
        case .facebookHost:
            guard let url = URL(string: issuer), url.scheme == "https", let host = url.host?.lowercased() else {
                return false
            }
            return host == "facebook.com" || host.hasSuffix(".facebook.com")
        }
    }
}
