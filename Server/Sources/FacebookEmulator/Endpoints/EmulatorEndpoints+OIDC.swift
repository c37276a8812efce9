import Foundation
import Hummingbird
import LatchkeyAPI

extension EmulatorEndpoints {
    /// The OpenID discovery document (§7.1), with this emulator's own URLs for keys and dialog.
    func discovery(_ request: EmulatorRequest) -> Response {
        .json([
            "issuer": .string(state.issuer),
            "authorization_endpoint": .string("\(request.baseURL)/dialog/oauth/"),
            "jwks_uri": .string("\(request.baseURL)/.well-known/oauth/openid/jwks/"),
            "response_types_supported": ["id_token", "token id_token"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": [
                "iss", "aud", "sub", "iat", "exp", "jti", "nonce", "at_hash", "name", "given_name", "middle_name",
                "family_name", "email", "picture", "user_friends", "user_birthday", "user_age_range", "user_link",
                "user_hometown", "user_location", "user_gender",
            ],
        ])
    }

    /// The JWKS every backend verifies Limited Login tokens with.
    func jwks() async -> Response {
        .json(["keys": .array(await state.keys.map(\.jwk))])
    }

    /// The iOS SDK's map of `kid` to X.509 PEM certificate.
    func certificates() async -> Response {
        .json(.object(Dictionary(uniqueKeysWithValues: await state.keys.map { ($0.kid, .string($0.certificatePEM)) })))
    }

    /// The Android SDK's map of `kid` to SPKI PEM public key.
    func publicKeys() async -> Response {
        .json(.object(Dictionary(uniqueKeysWithValues: await state.keys.map { ($0.kid, .string($0.publicKeyPEM)) })))
    }

    /// A generated avatar for people without a picture URL, so `picture.data.url` always resolves.
    func profilePicture(_ request: EmulatorRequest) -> Response {
        let seed = request["asid"] ?? "0"
        let hue = seed.unicodeScalars.reduce(0) { ($0 * 31 + Int($1.value)) % 360 }
        let side = min(max(Int(request["width"] ?? "") ?? 50, 16), 1024)
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(side)" height="\(side)" viewBox="0 0 50 50">\
            <rect width="50" height="50" fill="hsl(\(hue),55%,55%)"/>\
            <circle cx="25" cy="19" r="9" fill="#fff"/><ellipse cx="25" cy="44" rx="16" ry="12" fill="#fff"/></svg>
            """
        return .bytes(svg, contentType: "image/svg+xml")
    }
}
