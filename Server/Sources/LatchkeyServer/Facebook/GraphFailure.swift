import LatchkeyAPI

/// A Graph error envelope (facebook-protocol.md §6.1), read from a top-level `error` object or a
/// `debug_token` answer's `data.error` (whose subcode key is `subcode`, §4).
struct GraphFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// HTTP status of the answer.
    var status: Int
    var code: Int?
    var subcode: Int?
    var type: String?
    var message: String
    var isTransient: Bool

    init(status: Int, code: Int?, subcode: Int? = nil, type: String? = nil, message: String, isTransient: Bool = false)
    {
        self.status = status
        self.code = code
        self.subcode = subcode
        self.type = type
        self.message = message
        self.isTransient = isTransient
    }

    /// The failure in `error`, or `nil` when there is none.
    init?(_ error: JSONValue?, status: Int) {
        guard let error, error.isObject else { return nil }
        self.init(
            status: status, code: error["code"]?.intValue,
            subcode: error["error_subcode"]?.intValue ?? error["subcode"]?.intValue, type: error["type"]?.stringValue,
            message: error["message"]?.stringValue ?? "", isTransient: error["is_transient"] == .bool(true))
    }

    /// For the log (the cause of an error, never sent): Facebook's own words, with anything
    /// shaped like a token removed, since some of Facebook's messages echo the token they refuse
    /// ("Malformed access token …").
    var description: String {
        "Graph error \(code.map(String.init) ?? "-")/\(subcode.map(String.init) ?? "-") (HTTP \(status)): \(safeMessage)"
    }

    /// `message` with every run of 16 or more token characters (letters, digits, `|`, `_`, `-`,
    /// `.`) replaced by `…`: tokens, app tokens and proofs are such runs, and Facebook's prose has
    /// none.
    var safeMessage: String {
        var result = ""
        var run = ""
        func flush() {
            result += run.count >= 16 ? "…" : run
            run = ""
        }
        for character in message {
            if character.isASCII, character.isLetter || character.isNumber || "|_-.".contains(character) {
                run.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }

    /// Facebook refusing the caller's own credentials rather than the token being inspected: the
    /// app token's signature ("Invalid OAuth access token signature."), an app token required, the
    /// client secret ("Error validating client secret.", code 1, §3.6) or the application (101).
    var isAboutOurCredentials: Bool {
        let text = message.lowercased()
        return code == 101 || text.contains("client secret") || text.contains("validating application")
            || text.contains("access token signature") || text.contains("must provide an app access token")
    }

    /// The session subcode (§6.3): the one sent, or, for a 190 sent without one, the one its
    /// message names. Facebook's guide says the subcode may be absent, and captured answers carry
    /// the same messages with and without it (bk-rs/facebook-apis-rs fixtures: "Session has
    /// expired on …" and the password-change message, both without a subcode), so a person whose
    /// password changed is told so either way.
    var reasonSubcode: Int? {
        if let subcode { return subcode }
        guard code == 190 else { return nil }
        let text = message.lowercased()
        let phrases: [(String, Int)] = [
            ("session has expired", 463), ("changed their password", 460), ("changed the password", 460),
            ("has not authorized application", 458), ("user logged out", 467),
            ("session was invalidated explicitly", 466), ("not a confirmed user", 464),
            ("follow the instructions given", 459),
        ]
        return phrases.first { text.contains($0.0) }?.1
    }

    /// `appsecret_proof` missing or refused (§5.2, type `GraphMethodException`, code 100).
    var isProofRefusal: Bool { code == 100 && message.lowercased().contains("appsecret_proof") }
}
