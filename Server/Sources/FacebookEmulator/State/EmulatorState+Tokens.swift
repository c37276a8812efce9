import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// What an `access_token` parameter turned out to be.
enum PresentedToken: Sendable {
    /// A valid user token.
    case user(AccessTokenRecord)
    /// A valid app token (issued by `client_credentials`, or the literal `APPID|SECRET`).
    case app(EmulatorApp)
}

extension EmulatorState {
    /// Issues a user token for a person who already has a grant for the app.
    /// - Parameters:
    ///   - lifetime: seconds until expiry; `nil` gives a short-lived token ending on an hour boundary,
    ///     one to two hours from now, as Facebook's do.
    ///   - sendsSubcode: whether the token's errors carry a subcode (control API `send_subcode`).
    func issueUserToken(
        appID: String, personKey: String, lifetime: TimeInterval?, authType: String? = nil, sendsSubcode: Bool = true
    )
        -> AccessTokenRecord
    {
        let issuedAt = now()
        let expiresAt: Date
        if let lifetime {
            expiresAt = issuedAt.addingTimeInterval(lifetime)
        } else {
            let nextHour = (issuedAt.timeIntervalSince1970 / 3600).rounded(.down) * 3600 + 3600
            expiresAt = Date(timeIntervalSince1970: nextHour + 3600)
        }
        let record = AccessTokenRecord(
            token: RandomString.accessToken(), kind: .user, appID: appID, personKey: personKey, issuedAt: issuedAt,
            expiresAt: expiresAt, dataAccessExpiresAt: issuedAt.addingTimeInterval(lifetimes.dataAccess),
            invalidation: nil, authType: authType, sendsSubcode: sendsSubcode)
        tokens[record.token] = record
        return record
    }

    /// Issues an app token `APPID|random` (`client_credentials`).
    func issueAppToken(appID: String) -> String {
        let record = AccessTokenRecord(
            token: "\(appID)|\(RandomToken.alphanumeric(27))", kind: .app, appID: appID, personKey: nil,
            issuedAt: now(), expiresAt: nil, dataAccessExpiresAt: nil, invalidation: nil, authType: nil)
        tokens[record.token] = record
        return record.token
    }

    /// A valid long-lived token the person already has for the app, or a new one; `nil` without a
    /// grant. The test-user list uses it so that listing does not mint a token per call.
    func currentUserToken(appID: String, personKey: String) -> String? {
        guard grant(appID: appID, personKey: personKey) != nil else { return nil }
        let existing = tokens.values.first { record in
            record.appID == appID && record.personKey == personKey && problem(with: record) == nil
                && (record.expiresAt.map { $0.timeIntervalSince(record.issuedAt) } ?? 0) >= lifetimes.longLivedToken
        }
        return existing?.token
            ?? issueUserToken(appID: appID, personKey: personKey, lifetime: lifetimes.longLivedToken).token
    }

    /// Resolves a presented token, or the Graph error Facebook would answer for it (§6.3).
    func validate(token: String) -> Result<PresentedToken, GraphError> {
        if let record = tokens[token] {
            if let error = problem(with: record) { return .failure(error) }
            if record.kind == .app {
                guard let app = apps[record.appID] else { return .failure(.unparsableToken) }
                return .success(.app(app))
            }
            return .success(.user(record))
        }
        // The literal `APPID|SECRET` works wherever an app token does (§3.3).
        let parts = token.split(separator: "|", maxSplits: 1)
        if parts.count == 2, let app = apps[String(parts[0])] {
            guard ConstantTime.equals(String(parts[1]), app.secret) else {
                return .failure(GraphError(message: "Invalid OAuth access token signature.", code: 190))
            }
            return .success(.app(app))
        }
        return .failure(.unparsableToken)
    }

    /// Why a known token no longer works, or `nil` while it does; without its subcode when the
    /// token was minted or revoked with `send_subcode: false`.
    func problem(with record: AccessTokenRecord) -> GraphError? {
        guard var error = reason(record) else { return nil }
        if !record.sendsSubcode { error.subcode = nil }
        return error
    }

    private func reason(_ record: AccessTokenRecord) -> GraphError? {
        if let invalidation = record.invalidation {
            return GraphError(
                message: invalidation.message(appID: record.appID), code: 190, subcode: invalidation.subcode)
        }
        let current = now()
        if let expiresAt = record.expiresAt, expiresAt <= current {
            return .expired(
                expiredAt: FacebookDateText.format(expiresAt), now: FacebookDateText.format(current))
        }
        if record.kind == .user, let personKey = record.personKey {
            guard people[personKey] != nil else { return .unparsableToken }
            guard grants[GrantKey(appID: record.appID, personKey: personKey)] != nil else {
                return GraphError(
                    message: TokenInvalidation.appRemoved.message(appID: record.appID), code: 190,
                    subcode: TokenInvalidation.appRemoved.subcode)
            }
        }
        return nil
    }

    /// Revokes one token for `reason`; `false` if the emulator never issued it.
    /// - Parameter sendsSubcode: whether its errors carry a subcode from now on (`nil` keeps the
    ///   token's setting).
    func invalidate(token: String, reason: TokenInvalidation, sendsSubcode: Bool? = nil) -> Bool {
        guard let record = tokens[token] else { return false }
        tokens[token]?.invalidation = reason
        if reason == .appRemoved, tokens[token]?.grantedAtRemoval == nil, let personKey = record.personKey {
            tokens[token]?.grantedAtRemoval = grant(appID: record.appID, personKey: personKey)?.granted ?? []
        }
        if let sendsSubcode { tokens[token]?.sendsSubcode = sendsSubcode }
        return true
    }

    /// Revokes every token of a person (in one app, or all apps when `appID` is `nil`).
    @discardableResult
    func invalidateTokens(
        personKey: String, appID: String?, reason: TokenInvalidation, sendsSubcode: Bool? = nil,
        grantedAtRemoval: Set<String>? = nil
    ) -> Int {
        var count = 0
        for (token, record) in tokens
        where record.personKey == personKey && (appID == nil || record.appID == appID) && record.invalidation == nil {
            tokens[token]?.invalidation = reason
            if let grantedAtRemoval { tokens[token]?.grantedAtRemoval = grantedAtRemoval }
            if let sendsSubcode { tokens[token]?.sendsSubcode = sendsSubcode }
            count += 1
        }
        return count
    }

    /// Makes a token expire now (subcode 463 from then on).
    func expire(token: String, sendsSubcode: Bool? = nil) -> Bool {
        guard tokens[token] != nil else { return false }
        tokens[token]?.expiresAt = now()
        if let sendsSubcode { tokens[token]?.sendsSubcode = sendsSubcode }
        return true
    }

    // MARK: Codes

    /// Stores a dialog code; expired codes are dropped now and then, so a long-running
    /// emulator under load does not keep every code it ever issued.
    func issueCode(_ code: AuthorizationCode) {
        if codes.count >= 10_000 {
            let cutoff = now().addingTimeInterval(-lifetimes.code)
            codes = codes.filter { $0.value.issuedAt > cutoff }
        }
        codes[code.code] = code
    }

    /// Redeems a code once, with Facebook's error for each mismatch (§3.6).
    /// Either `secretVerified` or a verifier answering the code's challenge must be given.
    func redeemCode(
        _ value: String, appID: String, redirectURI: String, verifier: String?, secretVerified: Bool
    ) -> Result<AuthorizationCode, GraphError> {
        guard var code = codes[value], code.appID == appID else {
            return .failure(
                GraphError(message: "Invalid verification code format.", code: 100, challenge: "invalid_code"))
        }
        guard !code.used else {
            return .failure(
                GraphError(
                    message: "This authorization code has been used.", code: 100, subcode: 36009,
                    challenge: "invalid_code"))
        }
        guard now() < code.issuedAt.addingTimeInterval(lifetimes.code) else {
            return .failure(
                GraphError(
                    message: "This authorization code has expired.", code: 100, subcode: 36007,
                    challenge: "invalid_code"))
        }
        guard code.redirectURI == redirectURI else {
            return .failure(
                GraphError(
                    message:
                        "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request",
                    code: 100, subcode: 36008, challenge: "invalid_code"))
        }
        // A code issued with a challenge is bound to it (RFC 7636 §4.6): the secret alone is not enough.
        if let challenge = code.challenge, let method = code.challengeMethod {
            guard let verifier else {
                return .failure(GraphError(message: "Missing code_verifier parameter.", code: 100))
            }
            guard PKCE.verify(verifier: verifier, challenge: challenge, method: method) else {
                return .failure(GraphError(message: "Invalid code verifier.", code: 100))
            }
        } else if verifier != nil {
            return .failure(GraphError(message: "Invalid code verifier.", code: 100))
        } else if !secretVerified {
            return .failure(GraphError(message: "Missing client_secret parameter.", code: 100))
        }
        guard grant(appID: appID, personKey: code.personKey) != nil else {
            return .failure(
                GraphError(
                    message: TokenInvalidation.appRemoved.message(appID: appID), code: 190,
                    subcode: TokenInvalidation.appRemoved.subcode))
        }
        code.used = true
        codes[value] = code
        return .success(code)
    }

    /// Redeems a code and issues its long-lived token in one step, so nothing can revoke the grant
    /// in between.
    func exchange(
        code value: String, appID: String, redirectURI: String, verifier: String?, secretVerified: Bool
    ) -> Result<(AuthorizationCode, AccessTokenRecord), GraphError> {
        redeemCode(value, appID: appID, redirectURI: redirectURI, verifier: verifier, secretVerified: secretVerified)
            .map { code in
                let record = issueUserToken(
                    appID: appID, personKey: code.personKey, lifetime: lifetimes.longLivedToken,
                    authType: code.authType)
                return (code, record)
            }
    }

    /// The app a token string belongs to, when the emulator can tell: an issued token of any kind,
    /// or a literal `APPID|SECRET` naming a known app (whatever the secret).
    func owningAppID(of token: String) -> String? {
        if let record = tokens[token] { return record.appID }
        let parts = token.split(separator: "|", maxSplits: 1)
        if parts.count == 2, apps[String(parts[0])] != nil { return String(parts[0]) }
        return nil
    }

    /// Everything `debug_token` reports about a token, read in one step.
    func debugSnapshot(_ token: String) -> (AccessTokenRecord, EmulatorApp, Grant?, GraphError?)? {
        guard let record = tokens[token], let app = apps[record.appID] else { return nil }
        let personGrant = record.personKey.flatMap { self.grant(appID: record.appID, personKey: $0) }
        return (record, app, personGrant, problem(with: record))
    }
}

/// Facebook's date wording in token errors: "Wednesday, 16-Nov-22 07:45:51 PST".
enum FacebookDateText {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "America/Los_Angeles")
        formatter.dateFormat = "EEEE, dd-MMM-yy HH:mm:ss zzz"
        return formatter.string(from: date)
    }
}
