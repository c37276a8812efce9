import LatchkeyAPI

/// The header rules every token Latchkey verifies must pass, before any key is looked up.
///
/// Checked first and without I/O, so each header attack in the JWT corpus is refused before it
/// can cost a key fetch: the algorithm is the verifier's, never the token's (`alg: none` and the
/// RS256→HS256 confusion); keys come only from the verifier's own set, so headers naming another
/// key source (`jku`, `x5u`, `jwk`, `x5c`) are refused rather than ignored; `crit` names
/// extensions that must be understood (RFC 7515 §4.1.11) and we understand none; `cty` marks a
/// nested token (RFC 7519 §5.2), which no token kind here uses; and a `kid` is a short
/// identifier, never a path or a query.
public enum JOSEHeader {
    /// Header parameters that would make the token choose its own key or add semantics.
    public static let refusedParameters = ["jku", "x5u", "jwk", "x5c", "x5t", "x5t#S256", "crit", "cty", "zip", "b64"]

    /// The longest `kid` accepted: Facebook's are 40 hex characters, Latchkey's 22 base64url.
    public static let maximumKeyIDLength = 128

    /// Why a header was refused.
    public enum Refusal: Error, Sendable, Equatable {
        /// `alg` is not the one the verifier expects.
        case algorithm
        /// A parameter from `refusedParameters` is present.
        case parameter(String)
        /// `kid` is missing, too long or has characters outside `[A-Za-z0-9_-]`.
        case keyID
        /// `typ` is present and not `JWT`.
        case type

        /// A message for logs and error bodies (it names only the rule, never the token).
        public var message: String {
            switch self {
            case .algorithm: "the token is signed with an algorithm not accepted here"
            case .parameter(let name): "the token's header carries '\(name)', which is not accepted"
            case .keyID: "the token's header has no usable kid"
            case .type: "the token's typ is not JWT"
            }
        }
    }

    /// Checks `header` for a token that must be signed with `algorithm`.
    /// - Returns: the `kid`.
    public static func check(_ header: JSONValue, algorithm: String) throws(Refusal) -> String {
        guard header["alg"]?.stringValue == algorithm else { throw .algorithm }
        for name in refusedParameters where header[name] != nil { throw .parameter(name) }
        if let type = header["typ"], type.stringValue?.uppercased() != "JWT" { throw .type }
        guard let kid = header["kid"]?.stringValue, isWellFormedKeyID(kid) else { throw .keyID }
        return kid
    }

    /// 1–128 characters of `[A-Za-z0-9_-]`: every key id Facebook (hex) or Latchkey (base64url)
    /// issues, and nothing that could traverse a path or inject into a query if a key store ever
    /// looked one up there.
    public static func isWellFormedKeyID(_ kid: String) -> Bool {
        let bytes = kid.utf8
        guard !bytes.isEmpty, bytes.count <= maximumKeyIDLength else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}
