import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Logging
import NIOCore

/// Easy Login: an OAuth 2.0 authorization server (RFC 6749 code flow, PKCE per RFC 7636, native
/// apps per RFC 8252) whose login step is Facebook's own dialog.
///
/// `authorize` seals the app's request into a state of our own (`SealedRequest`, nothing stored)
/// and sends the browser to Facebook with it and PKCE of our own; `callback` turns Facebook's
/// answer into a Latchkey user and a one-minute code for the app; the token endpoint's
/// `authorization_code` grant (`redeem`) turns that code into a session.
struct EasyLoginService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let graph: GraphClient
    let classic: AccessTokenVerifier
    let tokens: SessionTokens
    let origin: ServerOrigin
    let limits: AbuseLimits
    /// Records the sign-in, joining by business as `POST /v1/auth/facebook` does.
    let recorder: SignInRecorder
    /// Holds the code back for a user's second factor (`FactorCodePage`).
    let secondFactor: SecondFactorService
    /// Sign-ins by provider, method and outcome (`latchkey_sign_ins_total`).
    var metrics: ServerMetrics?

    /// Where Facebook's dialog sends the person back (registered with the Facebook app).
    var callbackURL: String { origin.url + ServerConfiguration.facebookCallbackPath }

    /// Most Facebook permissions one request may ask for.
    static let maximumPermissions = 50

    // MARK: GET /v1/oauth/authorize

    /// - Parameter address: the limiter key of the browser's address.
    func authorize(_ query: String?, address: String, logger: Logger) async -> Response {
        let parameters = QueryParameters(query)
        // Until client and redirect URI check out, nothing may be redirected (§4.1.2.1, §10.15).
        guard let clientID = parameters["client_id"], let client = configuration.easyLogin.client(clientID) else {
            return EasyLoginResponse.page(
                title: "Unknown app", message: "This sign-in link names no app registered with this server.")
        }
        guard let redirectURI = parameters["redirect_uri"], !parameters.repeated.contains("redirect_uri"),
            client.accepts(redirectURI: redirectURI)
        else {
            return EasyLoginResponse.page(
                title: "Sign-in link not accepted",
                message: "The redirect_uri is missing or is not registered for this app.")
        }
        let clientState = parameters["state"]
        func fail(_ error: String, _ description: String, code: ErrorCode? = nil) -> Response {
            var pairs = [("error", error), ("error_description", description)]
            if let code { pairs.append(("error_code", code.rawValue)) }
            return answer(redirectURI, state: clientState, pairs)
        }
        if let name = parameters.repeated.first { return fail("invalid_request", "Parameter '\(name)' is repeated.") }
        if let state = clientState, state.utf8.count > 512 {
            return fail("invalid_request", "state is longer than 512 bytes.")
        }
        guard let responseType = parameters["response_type"] else {
            return fail("invalid_request", "response_type is required.")
        }
        guard responseType == "code" else {
            return fail("unsupported_response_type", "Only response_type=code is supported.")
        }
        guard let challenge = parameters["code_challenge"] else {
            return fail("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256.")
        }
        guard parameters["code_challenge_method"] == "S256" else {
            return fail("invalid_request", "code_challenge_method must be S256.")
        }
        guard PKCE.isValidS256Challenge(challenge) else {
            return fail("invalid_request", "code_challenge is not a base64url SHA-256 (43 characters).")
        }
        guard let permissions = Self.permissions(parameters["scope"]) else {
            return fail(
                "invalid_scope", "scope must list at most 50 Facebook permission names (a-z, 0-9, _), without openid.")
        }
        var mapping: [String: String]?
        if let text = parameters["fields_mapping"] {
            do {
                let requested = try Self.mapping(text)
                _ = try FieldMapping(request: requested, allowed: configuration.users.clientMappableProperties)
                mapping = requested
            } catch let error as APIError {
                return fail("invalid_request", error.message)
            } catch {
                return fail("invalid_request", "fields_mapping looks like field=property,field=property.")
            }
        }
        // A link request is checked now, so a stale one fails before the person meets Facebook;
        // the callback checks it again and spends it.
        let linkRequest = parameters["link_request"]
        if let linkRequest, openLinkRequest(linkRequest, now: configuration.clock())?.codeChallenge != challenge {
            return fail(
                "invalid_request", "link_request is not valid: start the link again from the app.",
                code: .linkRequestInvalid)
        }
        guard let app = configuration.facebook.apps.first else {
            return fail("server_error", "No Facebook app is configured.")
        }
        do {
            try await limits.enforce(limits.authorizeRule, key: address)
        } catch {
            // The request is valid, so the app hears why (§4.1.2.1) rather than the browser
            // stopping on a bare 429.
            return answer(
                redirectURI, state: clientState,
                [
                    ("error", "temporarily_unavailable"),
                    ("error_description", "Too many sign-ins from this network; try again in a moment."),
                    ("error_code", ErrorCode.rateLimited.rawValue),
                ])
        }
        // 32 random bytes, as RFC 7636 §4.1 recommends: the verifier rides in the sealed state, whose
        // length every byte of adds to.
        let verifier = SessionTokens.randomToken(bytes: 32)
        let request = AuthorizationRequest(
            clientID: client.id, redirectURI: redirectURI, clientState: clientState, codeChallenge: challenge,
            fieldsMapping: mapping, facebookAppID: app.id, facebookCodeVerifier: verifier,
            expiresAt: configuration.clock().addingTimeInterval(configuration.easyLogin.requestLifetime),
            linkRequest: linkRequest)
        // Nothing is stored: the request travels sealed in Facebook's state, so no number of
        // strangers can fill a table others need.
        let handle: String
        do {
            handle = try SealedRequest.seal(request, key: tokens.keys.current.signing)
        } catch {
            logger.error("latchkey.easy_login.seal_failed", metadata: ["latchkey.error.cause": "\(error)"])
            return fail("server_error", "The server could not start the sign-in; try again.")
        }
        return EasyLoginResponse.redirect(
            configuration.facebook.dialogURL,
            [
                ("client_id", app.id), ("redirect_uri", callbackURL), ("state", handle),
                ("response_type", "code"), ("scope", permissions.joined(separator: ",")),
                ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
            ])
    }

    // MARK: GET /v1/oauth/facebook/callback

    func callback(_ query: String?, address: String, logger: Logger) async -> Response {
        let parameters = QueryParameters(query)
        guard let handle = parameters["state"], handle.utf8.count <= SealedRequest.maximumLength else {
            return EasyLoginResponse.page(
                title: "Sign-in failed",
                message: "Facebook's answer carries no sign-in state. Start again from the app.")
        }
        // Before the state is opened or anything is written: nothing here is the app's yet, so a
        // refusal is a page, never a redirect.
        do {
            try await limits.enforce(limits.rules.callbackPerAddress, key: address)
        } catch {
            return Self.tooManySignIns
        }
        let now = configuration.clock()
        let pending: AuthorizationRequest
        do {
            guard let found = try await takeRequest(handle, now: now) else {
                return EasyLoginResponse.page(
                    title: "Sign-in link used or unknown",
                    message: "This sign-in was already completed or never started here. Start again from the app.")
            }
            pending = found
        } catch {
            logger.error("latchkey.easy_login.store_failed", metadata: ["latchkey.error.cause": "\(error)"])
            return EasyLoginResponse.page(
                status: .serviceUnavailable, title: "Sign-in failed", message: "Please try again in a moment.")
        }
        func fail(
            _ error: String, _ description: String, code: ErrorCode? = nil, linkTicket: String? = nil
        ) -> Response {
            var pairs = [("error", error), ("error_description", description)]
            if let code { pairs.append(("error_code", code.rawValue)) }
            // Not a bearer: completing it takes the session of the account that owns the identity.
            if let linkTicket { pairs.append(("link_ticket", linkTicket)) }
            return answer(pending.redirectURI, state: pending.clientState, pairs)
        }
        guard pending.expiresAt > now else {
            return fail("access_denied", "The sign-in took too long; start again.", code: .loginRequestExpired)
        }
        if let error = parameters["error"] {
            // A cancel (access_denied / user_denied) reaches the app as a plain access_denied.
            if error == "access_denied" || parameters["error_reason"] == "user_denied" {
                return fail("access_denied", "The person cancelled the Facebook login.")
            }
            return fail("access_denied", "Facebook refused the login.", code: .facebookTokenInvalid)
        }
        guard let facebookCode = parameters["code"], facebookCode.utf8.count <= 4096,
            let app = configuration.facebook.app(pending.facebookAppID)
        else {
            return fail("server_error", "Facebook's answer carries no code.", code: .facebookTokenInvalid)
        }
        do {
            switch try await signIn(pending, app: app, facebookCode: facebookCode, logger: logger) {
            case .code(let code):
                return answer(pending.redirectURI, state: pending.clientState, [("code", code)])
            case .secondFactor(let challenge):
                return FactorCodePage.response(challenge: challenge, error: nil)
            }
        } catch let error as APIError {
            logger.notice(
                "latchkey.easy_login.failed",
                metadata: [
                    "latchkey.error.code": "\(error.code)",
                    "latchkey.error.cause": "\(error.cause.map { "\($0)" } ?? "")",
                ])
            let oauth =
                switch error.status {
                case .serviceUnavailable, .tooManyRequests: "temporarily_unavailable"
                case _ where error.status.code >= 500: "server_error"
                default: "access_denied"
                }
            return fail(oauth, error.message, code: error.code, linkTicket: error.linkTicket)
        } catch {
            logger.error("latchkey.easy_login.internal_error", metadata: ["latchkey.error.cause": "\(error)"])
            return fail("server_error", "Something went wrong on our side.", code: .internalError)
        }
    }

    /// The request `state` carries, taken for good: opened and its single use recorded, or, for a
    /// request an earlier release parked in the database, taken from there. `nil` when the state
    /// is unknown, altered, already used, or expired beyond `PruneCutoffs.pendingAuthorizationGrace`.
    ///
    /// An expired request is not recorded (a replay meets the same refusal), and is reported, not
    /// refused here: within the grace the app still hears that the sign-in took too long.
    private func takeRequest(_ state: String, now: Date) async throws -> AuthorizationRequest? {
        // What `authorize` checked is checked again, since a request that opens was sealed by a
        // key of this deployment but the configuration may have changed since (a client removed),
        // and whoever holds an old key must not name a redirect URI or a lifetime of their own:
        // nothing is redirected anywhere this configuration does not allow today.
        func acceptable(_ request: AuthorizationRequest) -> Bool {
            now.timeIntervalSince(request.expiresAt) <= PruneCutoffs.pendingAuthorizationGrace
                && request.expiresAt.timeIntervalSince(now)
                    <= configuration.easyLogin.requestLifetime + configuration.signIn.clockSkew
                && configuration.easyLogin.client(request.clientID)?.accepts(redirectURI: request.redirectURI) == true
                && configuration.facebook.app(request.facebookAppID) != nil
        }
        // An earlier release's handle: 32 random bytes, 43 characters, shorter than any sealed state.
        if state.utf8.count == 43 {
            guard let parked = try await store.takePendingAuthorization(handleHash: SessionTokens.hash(state)) else {
                return nil
            }
            let request = AuthorizationRequest(parked)
            return acceptable(request) ? request : nil
        }
        guard let opened = SealedRequest.open(state, keys: tokens.keys.current.requestKeys),
            acceptable(opened.request)
        else { return nil }
        guard opened.request.expiresAt > now else { return opened.request }
        // Kept a clock skew beyond the expiry: a node whose clock runs ahead must not prune the use
        // while one running behind still takes the state.
        let first = try await store.useOnce(
            kind: Self.stateUseKind, value: opened.useKey,
            expiresAt: opened.request.expiresAt.addingTimeInterval(configuration.signIn.clockSkew), now: now)
        return first ? opened.request : nil
    }

    /// The page of a browser step refused by its address's limit: nothing is the app's yet.
    static var tooManySignIns: Response {
        EasyLoginResponse.page(
            status: .tooManyRequests, title: "Too many sign-ins",
            message: "Too many sign-ins from this network; wait a moment, then start again from the app.")
    }

    // MARK: POST /v1/oauth/factor

    /// The code page's form (`FactorCodePage`): a code that passes sends the browser to the app
    /// with its Easy Login code; a wrong one shows the page again; anything else is a page saying
    /// to start again from the app.
    func completeFactor(_ fields: [String: JSONValue], client: ClientInfo, address: String) async -> Response {
        do {
            try await limits.enforce(limits.rules.callbackPerAddress, key: address)
        } catch {
            return Self.tooManySignIns
        }
        func field(_ name: String) -> String? {
            fields[name]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 128 ? nil : $0 }
        }
        guard let challenge = field("challenge") else {
            return EasyLoginResponse.page(title: "Sign-in failed", message: "Start again from the app.")
        }
        let response = FactorChallengeResponse(
            challenge: challenge, code: field("code"), recoveryCode: field("recovery_code"))
        do {
            guard
                case .easyLogin(let code, let plan) = try await secondFactor.complete(
                    response, client: client, easyLogin: true), let redirectURI = plan.redirectURI
            else { throw APIError.invalidRequest("This challenge cannot be completed here.") }
            return answer(redirectURI, state: plan.state, [("code", code)])
        } catch let error as APIError {
            switch error.code {
            case .factorCodeInvalid, .invalidRequest:
                return FactorCodePage.response(challenge: challenge, error: error.message, status: .badRequest)
            case .rateLimited:
                return EasyLoginResponse.page(
                    status: .tooManyRequests, title: "Too many wrong codes",
                    message: "Wait a few minutes, then start again from the app.")
            default:
                return EasyLoginResponse.page(
                    title: "Sign-in expired",
                    message: "This sign-in can no longer be completed. Start again from the app.")
            }
        } catch {
            return EasyLoginResponse.page(
                status: .serviceUnavailable, title: "Sign-in failed", message: "Please try again in a moment.")
        }
    }

    /// The `single_use` kind that records a sealed state's use until it expires.
    static let stateUseKind = "easy_login_state"

    /// Exchanges Facebook's code, verifies the token exactly as `POST /v1/auth/facebook` does,
    /// finds or creates the user and stores an authorization code for the app, in one transaction.
    private func signIn(
        _ pending: AuthorizationRequest, app: ServerConfiguration.FacebookApp, facebookCode: String, logger: Logger
    ) async throws -> CallbackOutcome {
        let exchanged = try await classic.budget.spending(1) {
            try await graph.post(
                "/oauth/access_token",
                form: [
                    ("client_id", app.id), ("redirect_uri", callbackURL),
                    ("client_secret", app.secret), ("code", facebookCode),
                    ("code_verifier", pending.facebookCodeVerifier),
                ], app: app.id)
        }
        if let failure = exchanged.failure {
            let error = FacebookTriage.codeExchange(failure)
            classic.health.observe(error, appID: app.id)
            throw error
        }
        guard let facebookToken = exchanged.body["access_token"]?.stringValue, !facebookToken.isEmpty else {
            throw APIError.facebookUnavailable("Facebook answered the code exchange without a token; try again.")
        }
        let mapping =
            try pending.fieldsMapping.map {
                try FieldMapping(request: $0, allowed: configuration.users.clientMappableProperties)
            }
            ?? FieldMapping(trusted: configuration.users.defaultFieldsMapping)
        let identity = try await classic.verify(facebookToken, mapping: mapping)
        guard identity.appID == app.id else {
            throw APIError(.unauthorized, .facebookWrongApp, "Facebook answered for another app.")
        }
        try await limits.enforce(limits.rules.signInPerIdentity, key: identity.limitKey)
        let now = configuration.clock()
        let code = SessionTokens.randomToken(bytes: 32)
        let authorizationCode = NewAuthorizationCode(
            hash: SessionTokens.hash(code), clientID: pending.clientID, redirectURI: pending.redirectURI,
            codeChallenge: pending.codeChallenge, sessionID: SessionTokens.randomToken(bytes: 16),
            scope: identity.granted,
            expiresAt: now.addingTimeInterval(configuration.easyLogin.authorizationCodeLifetime))
        if let linkRequest = pending.linkRequest {
            return .code(
                try await linkCode(linkRequest, pending: pending, identity: identity, mapping: mapping, now: now))
        }
        let proven = identity.proven(mapping: mapping, at: now)
        var login = LoginRecord(
            proven, configuration: configuration, session: nil, authorizationCode: authorizationCode)
        var plan = FactorChallengePlan.signIn(proven)
        plan.kind = .easyLogin
        plan.method = .easyLogin
        plan.clientID = pending.clientID
        plan.redirectURI = pending.redirectURI
        plan.codeChallenge = pending.codeChallenge
        plan.state = pending.clientState
        let (challenge, held) = try secondFactor.challenge(plan, purpose: .signIn, now: now)
        login.challenge = held
        let user: StoredUser
        let created: Bool
        do {
            (user, created) = try await recorder.record(login, identity, now: now)
            count(created ? "created" : "returning")
        } catch let required as SecondFactorRequired {
            count("second_factor")
            logger.info(
                "latchkey.signin.second_factor_required",
                metadata: ["latchkey.user.id": "\(required.userID)", "latchkey.signin.kind": "easy_login"])
            return .secondFactor(challenge: challenge)
        } catch SignInConflict.userDisabled, IdentityRefusal.userDisabled {
            count("refused")
            await limits.refund(limits.rules.signInPerIdentity, key: identity.limitKey)
            throw APIError.userDisabled
        }
        logger.info(
            "latchkey.signin",
            metadata: [
                "latchkey.user.id": "\(user.id)", "latchkey.signin.kind": "easy_login",
                "latchkey.signin.created": .stringConvertible(created), "latchkey.oauth.client": "\(pending.clientID)",
            ])
        return .code(code)
    }

    /// What Facebook's return leads to: the app's code, or the code page of a second factor.
    enum CallbackOutcome {
        /// The code for the app.
        case code(String)
        /// The person has a second factor: the page asks for it, then the app gets its code.
        case secondFactor(challenge: String)
    }

    /// The callback of a link (`link_request`): nothing is written yet. The code the app gets is
    /// the link itself, sealed (`SealedToken.Kind.linkCode`): what to link to whom, bound to the
    /// app's client, redirect URI and PKCE challenge. Only its redemption with the verifier
    /// (`redeemLink`) links, so a handle that leaked, or one an attacker made a victim's browser
    /// carry, links nothing.
    private func linkCode(
        _ handle: String, pending: AuthorizationRequest, identity: FacebookIdentity, mapping: FieldMapping, now: Date
    ) async throws -> String {
        guard let request = openLinkRequest(handle, now: now), request.codeChallenge == pending.codeChallenge,
            try await store.isSessionActive(id: request.sessionID)
        else {
            await limits.refund(limits.rules.signInPerIdentity, key: identity.limitKey)
            throw Self.linkRequestInvalid
        }
        let expires = now.addingTimeInterval(configuration.easyLogin.authorizationCodeLifetime)
        // As `POST /v1/users/me/identities` does: a link that would split a person across the
        // business's apps is a conflict at redemption (`Verdicts.link`).
        let business = recorder.joinsByBusiness ? try await recorder.business.token(for: identity) : nil
        return try SealedToken.seal(
            [
                "u": .string(request.userID), "s": .string(request.sessionID), "c": .string(pending.codeChallenge),
                "cid": .string(pending.clientID), "ru": .string(pending.redirectURI),
                "e": .int(Int(expires.timeIntervalSince1970)), "p": "facebook", "sub": .string(identity.subject),
                "app": .string(identity.appID), "g": .array(identity.granted.map(JSONValue.string)),
                "m": .object(mapping.apply(to: identity.profile)), "n": .string(RandomToken.base64URL(bytes: 12)),
                "f": request.secondFactor.map { .string($0.rawValue) } ?? .null,
                "b": business.map(JSONValue.string) ?? .null,
            ], kind: .linkCode, key: tokens.keys.current.signing)
    }

    static let linkRequestInvalid = APIError(
        .badRequest, .linkRequestInvalid, "The link request expired, was used, or its session ended; link again.")

    /// Redeems an Easy Login link's code: checks what it is bound to (client, redirect URI, the
    /// verifier of its challenge, expiry, a single use), then links the identity to the request's
    /// user and opens a session for it, in one transaction.
    private func redeemLink(
        _ opened: SealedToken.Opened, clientID: String, redirectURI: String, verifier: String, client: ClientInfo,
        now: Date
    ) async throws -> SessionBody {
        let invalid = APIError(
            .badRequest, .authorizationCodeInvalid,
            "The code is unknown or expired, or was issued for another client, redirect_uri or code_verifier.")
        let payload = opened.payload
        guard let userID = payload["u"]?.stringValue, let sessionID = payload["s"]?.stringValue,
            let challenge = payload["c"]?.stringValue, payload["cid"]?.stringValue == clientID,
            payload["ru"]?.stringValue == redirectURI, let expires = payload["e"]?.intValue,
            TimeInterval(expires) > now.timeIntervalSince1970,
            ConstantTime.equals(PKCE.challenge(for: verifier), challenge),
            let provider = payload["p"]?.stringValue, let subject = payload["sub"]?.stringValue,
            let appID = payload["app"]?.stringValue
        else { throw invalid }
        guard
            try await store.useOnce(
                kind: Self.linkCodeUseKind, value: opened.useKey,
                expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)).addingTimeInterval(
                    configuration.signIn.clockSkew), now: now)
        else { throw invalid }
        guard try await store.isSessionActive(id: sessionID) else { throw Self.linkRequestInvalid }
        let granted = payload["g"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let proven = payload["f"]?.stringValue.flatMap(SecondFactorKind.init(rawValue:))
        var opening = tokens.opening(at: now, method: .easyLogin, client: client)
        opening.record.secondFactor = proven
        var record = LinkRecord(
            userID: userID,
            identity: StoredIdentity(
                provider: provider, subject: subject, appID: appID, grantedPermissions: granted, firstSeen: now,
                lastSeen: now),
            mappedProperties: payload["m"]?.objectValue ?? [:], provingSessionID: sessionID,
            reauthenticationWindow: configuration.identities.reauthenticationWindow,
            session: opening.record, businessToken: payload["b"]?.stringValue)
        record.provenSecondFactor = proven
        let outcome: LinkOutcome
        do {
            outcome = try await store.linkIdentity(record, now: now)
        } catch let refusal as IdentityRefusal {
            throw APIError(refusal, action: .link)
        } catch is SecondFactorRequired {
            // The link is made; the session asking for it proved no second factor, so the one the
            // link would open waits for none (there is no challenge to pass in a token request).
            throw APIError(
                .forbidden, .secondFactorRequired,
                "The identity is linked, but no session was opened: the session that asked proved no second factor. Sign in again."
            )
        }
        if case .conflict(let owner, let through) = outcome {
            try await secondFactor.requireFactorsForTicket(
                SessionTokens.AccessClaims(userID: userID, sessionID: sessionID, secondFactor: proven))
            throw try IdentityService.conflict(
                record, owner: owner, through: through, now: now, configuration: configuration, tokens: tokens)
        }
        var body = try tokens.body(
            userID: userID, sessionID: opening.id, refreshToken: opening.refreshToken,
            assurance: opening.assurance, now: now)
        body.scope = granted.joined(separator: " ")
        return body
    }

    /// What a link request binds, once opened and found unexpired; `nil` otherwise.
    private func openLinkRequest(_ handle: String, now: Date) -> LinkRequestClaims? {
        guard let opened = SealedToken.open(handle, kind: .linkRequest, keys: tokens.keys.current.requestKeys),
            let userID = opened.payload["u"]?.stringValue, let sessionID = opened.payload["s"]?.stringValue,
            let expires = opened.payload["e"]?.intValue, TimeInterval(expires) > now.timeIntervalSince1970
        else { return nil }
        return LinkRequestClaims(
            userID: userID, sessionID: sessionID, codeChallenge: opened.payload["c"]?.stringValue ?? "",
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)),
            secondFactor: opened.payload["f"]?.stringValue.flatMap(SecondFactorKind.init(rawValue:)))
    }

    /// The `single_use` kind that records a link code's redemption.
    static let linkCodeUseKind = "link_code"

    // MARK: POST /v1/oauth/token, grant_type=authorization_code

    /// - Parameter client: the app redeeming, as the session records it.
    func redeem(_ fields: [String: JSONValue], client: ClientInfo) async throws -> SessionBody {
        func required(_ field: TokenRequest.Field, maxLength: Int = 2048) throws -> String {
            let name = field.rawValue
            guard let value = try RequestReading.string(fields, name, maxLength: maxLength), !value.isEmpty else {
                throw APIError.invalidRequest("\(name) is required.")
            }
            return value
        }
        let clientID = try required(.clientID, maxLength: 128)
        guard configuration.easyLogin.client(clientID) != nil else {
            throw APIError(.unauthorized, .clientUnknown, "client_id names no registered client.")
        }
        let code = try required(.code, maxLength: SealedToken.Kind.linkCode.maximumLength)
        let redirectURI = try required(.redirectURI)
        let verifier = try required(.codeVerifier, maxLength: 128)
        guard PKCE.isWellFormed(verifier) else {
            throw APIError.invalidRequest("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.")
        }
        let now = configuration.clock()
        if let link = SealedToken.open(code, kind: .linkCode, keys: tokens.keys.current.requestKeys) {
            return try await redeemLink(
                link, clientID: clientID, redirectURI: redirectURI, verifier: verifier, client: client, now: now)
        }
        let opening = tokens.opening(at: now, method: .easyLogin, client: client, id: "")
        let outcome = try await store.redeemAuthorizationCode(
            CodePresentation(
                hash: SessionTokens.hash(code), clientID: clientID, redirectURI: redirectURI,
                codeChallenge: PKCE.challenge(for: verifier)),
            session: opening.record, now: now)
        switch outcome {
        case .issued(let sessionID, let userID, let scope, let secondFactor):
            var body = try tokens.body(
                userID: userID, sessionID: sessionID, refreshToken: opening.refreshToken,
                assurance: SessionAssurance(method: .easyLogin, secondFactor: secondFactor), now: now)
            body.scope = scope.joined(separator: " ")
            return body
        case .invalid:
            throw APIError(
                .badRequest, .authorizationCodeInvalid,
                "The code is unknown or expired, or was issued for another client, redirect_uri or code_verifier.")
        case .reused:
            throw APIError(
                .badRequest, .authorizationCodeReused,
                "This code was already used; the session it opened has been revoked.")
        case .userDisabled:
            throw APIError(.badRequest, .userDisabled, "This account is disabled.")
        }
    }

    // MARK: Helpers

    /// An authorization response to the app (§4.1.2), with `iss` (RFC 9207) against mix-up attacks.
    /// Counts an Easy Login sign-in the store answered (Facebook's identity, the `easy_login` method).
    private func count(_ outcome: String) {
        metrics?.signIn(provider: "facebook", method: SessionMethod.easyLogin.rawValue, outcome: outcome)
    }

    private func answer(_ redirectURI: String, state: String?, _ pairs: [(String, String)]) -> Response {
        var pairs = pairs
        if let state { pairs.append(("state", state)) }
        pairs.append(("iss", origin.url))
        return EasyLoginResponse.redirect(redirectURI, pairs)
    }

    /// `scope` as Facebook permissions: space- (OAuth) or comma- (Facebook) separated,
    /// `public_profile` always first. `nil` when malformed, or for `openid`: Latchkey issues no id
    /// tokens, and an OpenID client is better told so now than left waiting for one.
    static func permissions(_ scope: String?) -> [String]? {
        let names = (scope ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        guard names.count <= maximumPermissions,
            names.allSatisfy({ name in
                name.utf8.count <= 64
                    && name.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
            })
        else { return nil }
        var result = ["public_profile"]
        guard !names.contains("openid") else { return nil }
        for name in names where !result.contains(name) { result.append(name) }
        return result
    }

    /// `fields_mapping=field=property,field=property`, the format of `LATCHKEY_DEFAULT_FIELDS_MAPPING`.
    static func mapping(_ text: String) throws -> [String: String] {
        var mapping: [String: String] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, mapping[parts[0]] == nil else {
                throw APIError.invalidRequest("fields_mapping looks like field=property,field=property.")
            }
            mapping[parts[0]] = parts[1]
        }
        return mapping
    }
}
