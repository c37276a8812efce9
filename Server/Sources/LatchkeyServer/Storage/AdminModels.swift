import Crypto
import Foundation
import LatchkeyCrypto
import LatchkeyShared

/// An operator's key for the admin API and console, as stored: never the secret, only its
/// SHA-256 (the secret is 256 random bits, so a plain hash is as strong as a slow one).
package struct StoredAdminKey: Sendable, Equatable {
    /// The public part of the key (`lka_<id>_…`), shown in lists and audit events.
    package var id: String
    /// What the operator called it (`--name`).
    package var name: String
    /// SHA-256 of the secret part.
    package var hash: Data
    /// When it was made.
    package var createdAt: Date
    /// When an admin call last used it; `nil` when never.
    package var lastUsedAt: Date?
    /// When it was revoked; a revoked key authenticates nothing.
    package var revokedAt: Date?
    /// How many times the console was signed out with this key: a console session carries the
    /// generation it was signed in under and ends when the key's moves on. A counter rather than
    /// a time, so that nodes' clocks never decide which sessions a sign-out ends.
    package var consoleGeneration: Int

    /// Creates a stored key.
    package init(
        id: String, name: String, hash: Data, createdAt: Date, lastUsedAt: Date? = nil, revokedAt: Date? = nil,
        consoleGeneration: Int = 0
    ) {
        self.id = id
        self.name = name
        self.hash = hash
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
        self.consoleGeneration = consoleGeneration
    }
}

/// An admin key as its holder writes it: `lka_<id>_<secret>`, the id 16 hex digits, the secret
/// 32 random bytes in base64url. The id finds the stored key; the secret is checked against its
/// hash in constant time, so a key can be listed and revoked by id without anyone seeing it.
package struct AdminKeySecret: Sendable {
    /// The prefix every admin key starts with (secret scanners can match it).
    package static let prefix = "lka_"
    /// The key's id.
    package let id: String
    /// The secret part.
    package let secret: String

    /// The whole key, shown once when it is made.
    package var text: String { Self.prefix + id + "_" + secret }

    /// SHA-256 of the secret part, as stored.
    package var hash: Data { Data(SHA256.hash(data: Data(secret.utf8))) }

    /// A new random key.
    package static func generate() -> AdminKeySecret {
        AdminKeySecret(id: RandomToken.hex(16), secret: RandomToken.base64URL(bytes: 32))
    }

    private init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    /// Reads a presented key; `nil` for anything not shaped like one (checked before any lookup).
    package init?(_ text: String) {
        let utf8 = text.utf8
        guard utf8.count == Self.prefix.utf8.count + 16 + 1 + 43, text.hasPrefix(Self.prefix) else { return nil }
        let rest = text.dropFirst(Self.prefix.count)
        let id = rest.prefix(16)
        let hexDigits = Set("0123456789abcdef".utf8)
        guard id.utf8.allSatisfy(hexDigits.contains), rest.dropFirst(16).first == "_" else { return nil }
        let secret = rest.dropFirst(17)
        guard secret.utf8.allSatisfy(Self.isBase64URL) else { return nil }
        self.init(id: String(id), secret: String(secret))
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Whether this key's secret is the one `stored` keeps the hash of, compared in constant time.
    package func matches(_ stored: StoredAdminKey) -> Bool {
        stored.id == id && ConstantTime.equals(Hex.encode(hash), Hex.encode(stored.hash))
    }
}

/// A page of `LatchkeyStore.searchUsers`.
package struct UserSearchPage: Sendable, Equatable {
    /// The users found, newest first.
    package var users: [StoredUser]
    /// Where a property search stopped reading, having read as many users as it may with fewer
    /// matches than asked for; `nil` when the page is full or nothing follows.
    package var resumeAfter: UserCursor?

    /// Creates a page.
    package init(users: [StoredUser], resumeAfter: UserCursor? = nil) {
        self.users = users
        self.resumeAfter = resumeAfter
    }
}

/// What an operator searches users by (`GET /admin/v1/users?query=`).
package enum UserSearch: Sendable, Equatable {
    /// Every user.
    case all
    /// A user id, an identity's subject, or an email (case-insensitive), exactly: all three are
    /// indexed.
    case term(String)
    /// Users whose property `name` equals `value` (the property as text: `"DE"`, `42`, `true`).
    /// Not indexed: pages are found by walking users newest first.
    case property(name: String, value: String)

    /// The longest query accepted.
    package static let maximumLength = 256

    /// Reads `query`: empty is every user, `name=value` a property, anything else a term.
    /// - Returns: `nil` when the query is too long or names a property in a form not accepted.
    package init?(query: String?) {
        let query = (query ?? "").trimmingCharacters(in: .whitespaces)
        // No control character: PostgreSQL's text cannot hold a NUL, and no id, subject, email or
        // property value an operator looks for has one.
        guard query.utf8.count <= Self.maximumLength, !UserSearch.hasControlCharacter(query) else { return nil }
        if query.isEmpty {
            self = .all
        } else if let equals = query.firstIndex(of: "=") {
            let name = String(query[..<equals]).trimmingCharacters(in: .whitespaces)
            let value = String(query[query.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(Self.isNameByte) else { return nil }
            self = .property(name: name, value: value)
        } else {
            self = .term(query)
        }
    }

    /// Whether `text` holds a control character (a NUL among them).
    package static func hasControlCharacter(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Property names as mappings and apps write them.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}

/// Where a page of users continues: after the user `id`, created at `createdAt` (newest first,
/// ties by id). The store finds the user's own stored time when it still exists, so a page never
/// skips or repeats one because of a time's rounding; the time written here is the fallback for a
/// user deleted between two pages.
package struct UserCursor: Sendable, Equatable {
    /// The last user of the previous page.
    package var id: String
    /// Its creation time.
    package var createdAt: Date

    /// Creates a cursor.
    package init(id: String, createdAt: Date) {
        self.id = id
        self.createdAt = createdAt
    }

    /// The cursor after `user`.
    package init(after user: StoredUser) { self.init(id: user.id, createdAt: user.createdAt) }

    /// The times a cursor may carry: from 1970 to the year 9999. A time outside would not fit the
    /// database's (PostgreSQL's microseconds since 2000 in 64 bits), and no user was made then.
    static let times = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799)

    /// Opaque to clients: base64url of `<microseconds>.<id>`, the time as exact as the stores keep
    /// it, so the fallback skips no user made in the same millisecond.
    package var text: String {
        let microseconds = Int64((createdAt.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return Base64URL.encode(Data("\(microseconds).\(id)".utf8))
    }

    /// Reads a cursor this server wrote; `nil` for anything else.
    package init?(_ text: String) {
        guard text.utf8.count <= 200, let data = Base64URL.decode(text),
            let decoded = String(data: data, encoding: .utf8), let dot = decoded.firstIndex(of: ".")
        else { return nil }
        let id = String(decoded[decoded.index(after: dot)...])
        guard let microseconds = Int64(decoded[..<dot]), !id.isEmpty, id.utf8.count <= 64,
            !UserSearch.hasControlCharacter(id)
        else { return nil }
        let createdAt = Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
        guard Self.times.contains(createdAt) else { return nil }
        self.init(id: id, createdAt: createdAt)
    }
}
