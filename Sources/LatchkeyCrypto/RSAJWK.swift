import Foundation
import LatchkeyAPI
import LatchkeyShared

/// RSA public keys as JWKs (RFC 7517, RFC 7518 §6.3): the form Facebook publishes its Limited
/// Login keys in, read by the server and the SDK (the emulator writes them).
public enum RSAJWK {
    /// The RS256 signing keys of a JWKS document (`{"keys":[…]}`), by `kid`.
    ///
    /// Entries that are not RSA, are marked for another use or algorithm, carry a malformed `kid`
    /// (`JOSEHeader.isWellFormedKeyID`), or whose key `RSAPublicKey` refuses (under 2048 bits)
    /// are skipped, so one odd entry never hides the others. A `kid` listed twice is ambiguous and
    /// dropped altogether.
    public static func signingKeys(in document: JSONValue) -> [String: RSAPublicKey] {
        var keys: [String: RSAPublicKey] = [:]
        var repeated: Set<String> = []
        for jwk in document["keys"]?.arrayValue ?? [] {
            guard jwk["kty"] == "RSA", jwk["use"].map({ $0 == "sig" }) ?? true,
                jwk["alg"].map({ $0 == "RS256" }) ?? true,
                let kid = jwk["kid"]?.stringValue, JOSEHeader.isWellFormedKeyID(kid),
                let n = jwk["n"]?.stringValue.flatMap(Base64URL.decode),
                let e = jwk["e"]?.stringValue.flatMap(Base64URL.decode),
                let key = RSAPublicKey(n: n, e: e)
            else { continue }
            if keys.updateValue(key, forKey: kid) != nil { repeated.insert(kid) }
        }
        for kid in repeated { keys[kid] = nil }
        return keys
    }
}
