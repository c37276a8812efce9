import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// A console sign-in, carried by the browser in the `latchkey_console` cookie: which admin key
/// signed in, when, until when, and the form token (CSRF) every form of this session must send
/// back. Sealed (`SealedToken`, kind `A`) under the session key ring, so any node opens what
/// another issued and the browser can neither read nor alter it.
///
/// Why sealed in the cookie rather than stored: a console session then costs no table, no
/// pruning and no write per page, and works on every node at once. Every request reads the admin
/// key, which is what ends sessions from the server: revoking the key ends each of its console
/// sessions at once, and a sign-out (`StoredAdminKey.consoleGeneration` moving on) ends every
/// session of the key signed in before it, copies of the cookie included. A cookie left alone
/// dies after `idleLifetime`.
struct ConsoleSession: Sendable, Equatable {
    /// The admin key that signed in.
    var keyID: String
    /// The first 16 bytes of the key's stored hash: a key made again with the same id (never, but
    /// a restored backup could) is not the one this session signed in with.
    var keyHashPrefix: Data
    /// When the operator signed in.
    var issuedAt: Date
    /// The key's `consoleGeneration` when the operator signed in: a sign-out since has moved it on.
    var generation: Int
    /// When the session ends unless used: `idleLifetime` after the last page.
    var expiresAt: Date
    /// The form token: 128 random bits, the same for the session's life, so that a form opened
    /// in another tab still posts.
    var formToken: String

    /// The cookie's name: with `__Host-` over https, which browsers accept only from this very
    /// host with `Secure` and `Path=/`, so a sibling subdomain cannot plant one of its own.
    static func cookieName(secure: Bool) -> String { secure ? "__Host-latchkey_console" : "latchkey_console" }
    /// The sign-in form's own token cookie (before a session exists: a stranger's page cannot post
    /// its key into an operator's browser).
    static func signInCookieName(secure: Bool) -> String {
        secure ? "__Host-latchkey_console_sign_in" : "latchkey_console_sign_in"
    }
    /// How long a session lives unused.
    static let idleLifetime: TimeInterval = 30 * 60
    /// How long a session lives at most, however busy.
    static let absoluteLifetime: TimeInterval = 12 * 3600
    /// How far ahead of this node's clock another node's may be: a session issued there a moment
    /// "later" is not refused here.
    static let clockLeeway: TimeInterval = 60

    /// A new session for `key`, signed in at `now`.
    init(key: StoredAdminKey, now: Date) {
        self.init(
            keyID: key.id, keyHashPrefix: Data(key.hash.prefix(16)), issuedAt: now, generation: key.consoleGeneration,
            expiresAt: now.addingTimeInterval(Self.idleLifetime), formToken: Self.randomToken())
    }

    init(keyID: String, keyHashPrefix: Data, issuedAt: Date, generation: Int, expiresAt: Date, formToken: String) {
        self.keyID = keyID
        self.keyHashPrefix = keyHashPrefix
        self.issuedAt = issuedAt
        self.generation = generation
        self.expiresAt = expiresAt
        self.formToken = formToken
    }

    /// 128 random bits, base64url.
    static func randomToken() -> String {
        Base64URL.encode(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
    }

    /// This session used at `now`: it lives another `idleLifetime`, never past `absoluteLifetime`.
    func renewed(at now: Date) -> ConsoleSession {
        var renewed = self
        renewed.expiresAt = min(
            now.addingTimeInterval(Self.idleLifetime), issuedAt.addingTimeInterval(Self.absoluteLifetime))
        return renewed
    }

    /// Whether this session is still alive at `now` and was issued for `key`, neither revoked nor
    /// signed out since.
    func isValid(for key: StoredAdminKey, now: Date) -> Bool {
        key.revokedAt == nil && key.id == keyID && now < expiresAt
            && issuedAt <= now.addingTimeInterval(Self.clockLeeway)
            && now < issuedAt.addingTimeInterval(Self.absoluteLifetime)
            && key.consoleGeneration == generation
            && ConstantTime.equals(Hex.encode(Data(key.hash.prefix(16))), Hex.encode(keyHashPrefix))
    }

    /// How long the browser should keep the cookie: until the idle or the absolute end, whichever
    /// comes first.
    func cookieLifetime(at now: Date) -> Int {
        max(0, Int(min(expiresAt, issuedAt.addingTimeInterval(Self.absoluteLifetime)).timeIntervalSince(now)))
    }

    /// Whether `presented` is this session's form token, compared in constant time.
    func acceptsForm(_ presented: String?) -> Bool {
        guard let presented else { return false }
        return ConstantTime.equals(presented, formToken)
    }

    /// The cookie's value.
    func sealed(key: SessionSigningKey) throws -> String {
        try SealedToken.seal(
            [
                "k": .string(keyID), "h": .string(Base64URL.encode(keyHashPrefix)),
                "i": .int(Int(issuedAt.timeIntervalSince1970)), "g": .int(generation),
                "e": .int(Int(expiresAt.timeIntervalSince1970)),
                "c": .string(formToken),
            ], kind: .consoleSession, key: key)
    }

    /// The session a cookie's value holds; `nil` when it is not one this deployment sealed.
    init?(sealed text: String, keys: [Data: SessionSigningKey]) {
        guard let payload = SealedToken.open(text, kind: .consoleSession, keys: keys)?.payload,
            let keyID = payload["k"]?.stringValue, let hash = payload["h"]?.stringValue.flatMap(Base64URL.decode),
            let issued = payload["i"]?.intValue, let generation = payload["g"]?.intValue,
            let expires = payload["e"]?.intValue,
            let token = payload["c"]?.stringValue
        else { return nil }
        self.init(
            keyID: keyID, keyHashPrefix: hash, issuedAt: Date(timeIntervalSince1970: TimeInterval(issued)),
            generation: generation,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)), formToken: token)
    }
}
