import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

/// A second factor end to end, on SQLite (and on PostgreSQL in the PostgreSQL pass): enrolment,
/// every sign-in path held back and completed, recovery codes, challenges, replays, the lockout,
/// removal and regeneration, step-up, and the tokens' `amr` and `aal`.
@Suite("Second factor")
struct SecondFactorTests {
    /// Guests on, so a guest's upgrade can be held back too.
    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.identities.anonymousUsers = true
        configuration.secondFactor.totpIssuer = "Example App"
    }

    /// What an enrolment leaves a test with.
    struct Enrolled {
        var factorID: String
        var authenticator: TestAuthenticator
        var recoveryCodes: [String]
    }

    /// Signs `user` in with a classic token: the session (`access_token`, `refresh_token`).
    static func signIn(_ stack: Stack, _ user: String = "alice") async throws -> JSONValue {
        let answer = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user))])
        #expect(answer.status == .ok, "\(String(buffer: answer.body))")
        return try #require(try answer.json()["session"])
    }

    /// Enrols and verifies a TOTP factor for the holder of `bearer`, then moves the clock on a step
    /// (the verifying code is spent).
    static func enroll(_ stack: Stack, bearer: String, name: String = "Phone") async throws -> Enrolled {
        let added = try await stack.send(
            .post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp", "displayName": .string(name)])
        #expect(added.status == .created, "\(String(buffer: added.body))")
        let body = try added.json()
        let authenticator = try TestAuthenticator(
            base32: try #require(body["secret"]?.stringValue), clock: stack.clock)
        let id = try #require(body["id"]?.stringValue)
        let verified = try await stack.send(
            .post, "/v1/users/me/factors/\(id)/verify", bearer: bearer, json: ["code": .string(authenticator.code())])
        #expect(verified.status == .ok, "\(String(buffer: verified.body))")
        stack.clock.advance(30)
        return Enrolled(
            factorID: id, authenticator: authenticator,
            recoveryCodes: try verified.json()["recoveryCodes"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// `POST /v1/auth/factor`.
    static func complete(
        _ stack: Stack, _ challenge: String, code: String? = nil, recoveryCode: String? = nil
    ) async throws -> TestResponse {
        var body: [String: JSONValue] = ["challenge": .string(challenge)]
        if let code { body["code"] = .string(code) }
        if let recoveryCode { body["recoveryCode"] = .string(recoveryCode) }
        return try await stack.post("/v1/auth/factor", json: .object(body))
    }

    /// The challenge of a `second_factor_required` answer, checked to be one.
    static func challenge(of answer: TestResponse, status: HTTPResponse.Status = .unauthorized) throws -> String {
        #expect(answer.status == status, "\(String(buffer: answer.body))")
        #expect(answer.errorCode == "second_factor_required")
        return try #require(try answer.json()["error"]?["challenge"]?.stringValue)
    }

    @Test("enrolment: a pending factor with an otpauth URI, verified by a code, answers ten recovery codes once")
    func enrolment() async throws {
        try await Stack.run(Self.configure) { stack in
            let bearer = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            let added = try await stack.send(
                .post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp", "displayName": "Work phone"])
            #expect(added.status == .created)
            let body = try added.json()
            let secret = try #require(body["secret"]?.stringValue)
            #expect(Base32.decode(secret)?.count == 20)
            let uri = try #require(body["uri"]?.stringValue)
            #expect(uri.hasPrefix("otpauth://totp/Example%20App:"))
            #expect(uri.contains("secret=\(secret)") && uri.contains("issuer=Example%20App"))
            #expect(uri.contains("algorithm=SHA1") && uri.contains("digits=6") && uri.contains("period=30"))
            let id = try #require(body["id"]?.stringValue)
            // Pending: it guards nothing yet, and a sign-in goes straight through.
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            let listed = try await stack.get("/v1/users/me/factors", bearer: bearer).json()
            #expect(listed["factors"]?.arrayValue?.first?["status"] == "pending" && listed["recoveryCodesLeft"] == 0)

            let authenticator = try TestAuthenticator(base32: secret, clock: stack.clock)
            let wrong = try await stack.send(
                .post, "/v1/users/me/factors/\(id)/verify", bearer: bearer,
                json: ["code": .string(authenticator.wrongCode())])
            #expect(wrong.errorCode == "factor_code_invalid")
            let verified = try await stack.send(
                .post, "/v1/users/me/factors/\(id)/verify", bearer: bearer,
                json: ["code": .string(authenticator.code(steps: -1))])
            #expect(verified.status == .ok)
            let codes = try #require(try verified.json()["recoveryCodes"]?.arrayValue?.compactMap(\.stringValue))
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(try verified.json()["factor"]?["status"] == "active")
            let listing = try await stack.get("/v1/users/me/factors", bearer: bearer)
            let after = try listing.json()
            #expect(
                after["factors"]?.arrayValue?.first?["displayName"] == "Work phone" && after["recoveryCodesLeft"] == 10)
            // Verified once: the same id cannot be verified again.
            #expect(
                try await stack.send(
                    .post, "/v1/users/me/factors/\(id)/verify", bearer: bearer,
                    json: ["code": .string(authenticator.code())]
                ).errorCode == "factor_not_found")
            // Not the SDK's business, nor a stranger's: neither answer shows the secret again.
            #expect(!String(buffer: listing.body).contains(secret))
            let events = try await stack.get("/v1/users/me/events", bearer: bearer).json()["events"]?.arrayValue ?? []
            let types = events.compactMap { $0["type"]?.stringValue }
            #expect(types.contains("factor.enrolled") && types.contains("factor.activated"))
        }
    }

    @Test("classic and Limited Login sign-ins are held back, then completed with a TOTP code; amr and aal verify")
    func facebookPaths() async throws {
        try await Stack.run(Self.configure) { stack in
            let first = try await Self.signIn(stack)
            let enrolled = try await Self.enroll(stack, bearer: try #require(first["access_token"]?.stringValue))

            let classic = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            let challenge = try Self.challenge(of: classic)
            let error = try classic.json()["error"]
            #expect(error?["expiresIn"] == 300)
            let hint = error?["factors"]?.arrayValue?.first
            #expect(error?["factors"]?.arrayValue?.count == 1 && hint?["id"] == .string(enrolled.factorID))
            #expect(hint?["displayName"] == "Phone" && hint?["type"] == "totp")
            #expect(classic.headers[.cacheControl] == "no-store")
            let done = try await Self.complete(stack, challenge, code: enrolled.authenticator.code())
            #expect(done.status == .ok, "\(String(buffer: done.body))")
            let body = try done.json()
            #expect(body["user"]?["id"] != nil && body["isNewUser"] == false && body["recoveryCodesLeft"] == nil)
            #expect(body["grantedPermissions"]?.arrayValue?.contains("email") == true)
            let token = try #require(body["session"]?["access_token"]?.stringValue)
            let claims = try await stack.verifiedClaims(token)
            #expect(claims["amr"] == ["fb", "otp", "mfa"] && claims["aal"] == 2)
            #expect(try await stack.get("/v1/users/me", bearer: token).status == .ok)
            // Refresh keeps them.
            let refreshed = try await SessionTests.refresh(
                stack, try #require(body["session"]?["refresh_token"]?.stringValue))
            let again = try #require(try refreshed.json()["access_token"]?.stringValue)
            let kept = try await stack.verifiedClaims(again)
            #expect(kept["amr"] == ["fb", "otp", "mfa"] && kept["aal"] == 2)
            // The first session predates the factor: aal 1, amr fb.
            let before = try await stack.verifiedClaims(try #require(first["access_token"]?.stringValue))
            #expect(before["amr"] == ["fb"] && before["aal"] == 1)

            stack.clock.advance(30)
            let limited = try await stack.signIn([
                "idToken": .string(try await stack.idToken()), "nonce": .string(Demo.rawNonce),
            ])
            let limitedDone = try await Self.complete(
                stack, try Self.challenge(of: limited), code: enrolled.authenticator.code())
            #expect(limitedDone.status == .ok)
            let limitedClaims = try await stack.verifiedClaims(
                try #require(try limitedDone.json()["session"]?["access_token"]?.stringValue))
            #expect(limitedClaims["amr"] == ["fb", "otp", "mfa"] && limitedClaims["aal"] == 2)
            let sessions = try await stack.get("/v1/users/me/sessions", bearer: token).json()["sessions"]?.arrayValue
            #expect(sessions?.map { $0["method"] } == ["limited_login", "classic", "classic"])
        }
    }

    @Test("Sign in with Apple is held back and completed like Facebook's")
    func applePath() async throws {
        try await Stack.run(apple: true, Self.configure) { stack in
            let first = try await stack.signInWithApple(try await stack.appleCredential().body())
            #expect(first.status == .ok, "\(String(buffer: first.body))")
            let bearer = try #require(try first.json()["session"]?["access_token"]?.stringValue)
            let enrolled = try await Self.enroll(stack, bearer: bearer)
            let held = try await stack.signInWithApple(try await stack.appleCredential().body(name: false))
            let done = try await Self.complete(stack, try Self.challenge(of: held), code: enrolled.authenticator.code())
            #expect(done.status == .ok, "\(String(buffer: done.body))")
            let claims = try await stack.verifiedClaims(
                try #require(try done.json()["session"]?["access_token"]?.stringValue))
            #expect(claims["amr"] == ["apple", "otp", "mfa"] && claims["aal"] == 2)
        }
    }

    @Test("Easy Login shows its code page before the app's redirect; the code's session proved the factor")
    func easyLoginCodePage() async throws {
        try await Stack.run(browsable: true, Self.configure) { stack in
            let bearer = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            let enrolled = try await Self.enroll(stack, bearer: bearer)
            let request = AuthorizeRequest()
            let outcome = try await TestBrowser.signIn(request.url(stack), stack: stack)
            guard case .page(let status, let page) = outcome else {
                Issue.record("expected the code page, got \(outcome)")
                return
            }
            #expect(status == 200 && page.contains("Two-step verification"))
            #expect(page.contains("action=\"/v1/oauth/factor\"") && page.contains("autocomplete=\"one-time-code\""))
            let challenge = try #require(
                page.range(of: "name=\"challenge\" value=\"").map { page[$0.upperBound...].prefix { $0 != "\"" } })
            // A wrong code: the page again, saying so, with the same challenge.
            let wrong = try await stack.postForm(
                "/v1/oauth/factor", [("challenge", String(challenge)), ("code", enrolled.authenticator.wrongCode())])
            #expect(wrong.status == .badRequest && String(buffer: wrong.body).contains("wrong"))
            #expect(wrong.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none'") == true)
            #expect(wrong.headers[.cacheControl] == "no-store")
            // The JSON endpoint does not complete it.
            #expect(
                try await Self.complete(stack, String(challenge), code: enrolled.authenticator.code()).errorCode
                    == "factor_challenge_invalid")
            let passed = try await stack.postForm(
                "/v1/oauth/factor", [("challenge", String(challenge)), ("code", enrolled.authenticator.code())])
            #expect(passed.status == .found)
            let location = try #require(passed.headers[.location])
            #expect(location.hasPrefix(request.redirectURI + "?"))
            let answer = TestBrowser.query(location)
            #expect(answer["state"] == request.state && answer["iss"] == stack.serverURL.absoluteString)
            let issued = try await stack.postForm(
                "/v1/oauth/token", request.tokenForm(code: try #require(answer["code"])))
            #expect(issued.status == .ok)
            let claims = try await stack.verifiedClaims(try #require(try issued.json()["access_token"]?.stringValue))
            #expect(claims["amr"] == ["fb", "otp", "mfa"] && claims["aal"] == 2)
            // Spent: the page's form cannot complete it again.
            let again = try await stack.postForm(
                "/v1/oauth/factor", [("challenge", String(challenge)), ("code", enrolled.authenticator.code())])
            #expect(again.status == .badRequest && String(buffer: again.body).contains("Start again"))
        }
    }

    @Test("a guest with a second factor (enrolled before guests were refused one): the upgrade waits for it too")
    func guestUpgrade() async throws {
        try await Stack.run(Self.configure) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let bearer = try #require(guest["session"]?["access_token"]?.stringValue)
            // A guest cannot enrol one now (`Verdicts.factorChange`); one from before is honoured.
            let guestID = try #require(guest["user"]?["id"]?.stringValue)
            let secret = Data((0..<20).map { UInt8($0 * 7 % 251) })
            #expect(
                try await stack.store.addFactor(
                    NewFactor(
                        id: "legacy-factor", userID: guestID, type: .totp, displayName: nil, secret: secret,
                        createdAt: stack.clock.now),
                    pendingSince: stack.clock.now - 3600, limit: 10, now: stack.clock.now))
            _ = try await stack.store.activateFactor(
                id: "legacy-factor", userID: guestID, step: 0, recoveryCodes: [], now: stack.clock.now)
            let enrolled = Enrolled(
                factorID: "legacy-factor",
                authenticator: try TestAuthenticator(base32: Base32.encode(secret), clock: stack.clock),
                recoveryCodes: [])
            let upgrade = try await stack.signIn(
                ["accessToken": .string(try await stack.facebookToken("bob"))], bearer: bearer)
            let done = try await Self.complete(
                stack, try Self.challenge(of: upgrade), code: enrolled.authenticator.code())
            #expect(done.status == .ok, "\(String(buffer: done.body))")
            let body = try done.json()
            #expect(body["user"]?["id"] == guest["user"]?["id"] && body["user"]?["isAnonymous"] == false)
            let claims = try await stack.verifiedClaims(try #require(body["session"]?["access_token"]?.stringValue))
            #expect(claims["amr"] == ["fb", "otp", "mfa"] && claims["is_anonymous"] == nil)
        }
    }

    @Test("a recovery code completes a sign-in once, says how many are left, and is refused again")
    func recoveryCode() async throws {
        try await Stack.run(Self.configure) { stack in
            let bearer = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            let enrolled = try await Self.enroll(stack, bearer: bearer)
            let code = try #require(enrolled.recoveryCodes.last)
            let held = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            // Typed back loosely: upper case, spaces for the dash.
            let done = try await Self.complete(
                stack, try Self.challenge(of: held),
                recoveryCode: code.uppercased().replacingOccurrences(of: "-", with: " "))
            #expect(done.status == .ok, "\(String(buffer: done.body))")
            #expect(try done.json()["recoveryCodesLeft"] == 9)
            let claims = try await stack.verifiedClaims(
                try #require(try done.json()["session"]?["access_token"]?.stringValue))
            #expect(claims["amr"] == ["fb", "rcode", "mfa"] && claims["aal"] == 2)
            let again = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            let reused = try await Self.complete(stack, try Self.challenge(of: again), recoveryCode: code)
            #expect(reused.errorCode == "factor_code_invalid")
            #expect(try await stack.get("/v1/users/me/factors", bearer: bearer).json()["recoveryCodesLeft"] == 9)
        }
    }

    @Test("a challenge expires, is single use, and a code is accepted once per factor: on two nodes too")
    func expiryAndReplay() async throws {
        try await Stack.run(Self.configure) { stack in
            let bearer = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            let enrolled = try await Self.enroll(stack, bearer: bearer)
            func held() async throws -> String {
                try Self.challenge(
                    of: try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]))
            }
            let late = try await held()
            stack.clock.advance(301)
            #expect(
                try await Self.complete(stack, late, code: enrolled.authenticator.code()).errorCode
                    == "factor_challenge_invalid")

            let once = try await held()
            let code = enrolled.authenticator.code()
            #expect(try await Self.complete(stack, once, code: code).status == .ok)
            // The challenge is spent; another challenge with the same code (or an earlier one) is not
            // let in either, on this node or on another one sharing the database.
            #expect(try await Self.complete(stack, once, code: code).errorCode == "factor_challenge_invalid")
            let second = try await held()
            #expect(try await Self.complete(stack, second, code: code).errorCode == "factor_code_invalid")
            let third = try await held()
            let configuration = stack.configuration
            try await Stack.run(
                clock: stack.clock, store: stack.store,
                {
                    $0.secrets.keyEncryptionKey = configuration.secrets.keyEncryptionKey; Self.configure(&$0)
                },
                { (other: Stack) async throws in
                    #expect(try await Self.complete(other, third, code: code).errorCode == "factor_code_invalid")
                    #expect(
                        try await Self.complete(other, third, code: enrolled.authenticator.code(steps: -1)).errorCode
                            == "factor_code_invalid")
                    other.clock.advance(30)
                    #expect(try await Self.complete(other, third, code: enrolled.authenticator.code()).status == .ok)
                })
        }
    }

    @Test("wrong codes kill the challenge and make the person wait, longer each time; a right code resets")
    func lockout() async throws {
        try await Stack.run(Self.configure) { stack in
            let bearer = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            let enrolled = try await Self.enroll(stack, bearer: bearer)
            let wrong = enrolled.authenticator.wrongCode()
            func held() async throws -> String {
                try Self.challenge(
                    of: try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]))
            }
            let challenge = try await held()
            for attempt in 1...5 {
                let answer = try await Self.complete(stack, challenge, code: wrong)
                #expect(answer.errorCode == "factor_code_invalid", "attempt \(attempt)")
            }
            #expect(try await Self.complete(stack, challenge, code: wrong).errorCode == "factor_challenge_invalid")
            // The right code on a fresh challenge waits too: the person's attempts are locked.
            let next = try await held()
            let locked = try await Self.complete(stack, next, code: enrolled.authenticator.code())
            #expect(locked.status == .tooManyRequests && locked.errorCode == "rate_limited")
            #expect(locked.headers[.retryAfter] == "30")
            stack.clock.advance(31)
            #expect(try await Self.complete(stack, next, code: wrong).errorCode == "factor_code_invalid")
            let longer = try await Self.complete(stack, next, code: enrolled.authenticator.code())
            #expect(longer.errorCode == "rate_limited" && longer.headers[.retryAfter] == "60")
            stack.clock.advance(61)
            #expect(try await Self.complete(stack, next, code: enrolled.authenticator.code()).status == .ok)
            // Reset: five wrong codes are needed again before a wait.
            stack.clock.advance(30)
            let fresh = try await held()
            #expect(try await Self.complete(stack, fresh, code: wrong).errorCode == "factor_code_invalid")
            #expect(try await Self.complete(stack, fresh, code: enrolled.authenticator.code()).status == .ok)
            let events =
                try await stack.get("/v1/users/me/events?limit=100", bearer: bearer).json()["events"]?
                .arrayValue ?? []
            #expect(events.filter { $0["type"] == "factor.locked" }.count == 2)
        }
    }

    @Test("removing a factor, adding another and new recovery codes need aal 2; a step-up raises the same session")
    func stepUpRules() async throws {
        try await Stack.run(Self.configure) { stack in
            let session = try await Self.signIn(stack)
            let bearer = try #require(session["access_token"]?.stringValue)
            let enrolled = try await Self.enroll(stack, bearer: bearer)
            // This session predates the factor: aal 1.
            let refused = try await stack.send(.delete, "/v1/users/me/factors/\(enrolled.factorID)", bearer: bearer)
            let replaced = try Self.challenge(of: refused, status: .forbidden)
            #expect(
                try await stack.send(
                    .post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp"]
                ).errorCode == "second_factor_required")
            // Each refusal carries a fresh step-up challenge, replacing the session's last one.
            let challenge = try Self.challenge(
                of: try await stack.send(.post, "/v1/users/me/recovery-codes", bearer: bearer), status: .forbidden)
            #expect(
                try await Self.complete(stack, replaced, code: enrolled.authenticator.code()).errorCode
                    == "factor_challenge_invalid")

            let raised = try await Self.complete(stack, challenge, code: enrolled.authenticator.code())
            #expect(raised.status == .ok, "\(String(buffer: raised.body))")
            let fresh = try raised.json()
            let strong = try #require(fresh["access_token"]?.stringValue)
            let claims = try await stack.verifiedClaims(strong)
            let before = try await stack.verifiedClaims(bearer)
            #expect(claims["sid"] == before["sid"] && claims["amr"] == ["fb", "otp", "mfa"] && claims["aal"] == 2)
            // The session's tokens were replaced: the old refresh token is refused without ending
            // the session, the new one works and keeps aal 2.
            let old = try await SessionTests.refresh(stack, try #require(session["refresh_token"]?.stringValue))
            #expect(old.errorCode == "refresh_token_invalid")
            let refreshed = try await SessionTests.refresh(stack, try #require(fresh["refresh_token"]?.stringValue))
            #expect(refreshed.status == .ok)
            let kept = try await stack.verifiedClaims(try #require(try refreshed.json()["access_token"]?.stringValue))
            #expect(kept["aal"] == 2)

            let codes = try await stack.send(.post, "/v1/users/me/recovery-codes", bearer: strong)
            #expect(codes.status == .ok)
            let newCodes = try #require(try codes.json()["recoveryCodes"]?.arrayValue)
            #expect(newCodes.count == 10)
            let held = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(
                try await Self.complete(stack, try Self.challenge(of: held), recoveryCode: enrolled.recoveryCodes[0])
                    .errorCode == "factor_code_invalid")

            #expect(
                try await stack.send(.delete, "/v1/users/me/factors/\(enrolled.factorID)", bearer: strong).status
                    == .noContent)
            let listed = try await stack.get("/v1/users/me/factors", bearer: strong).json()
            #expect(listed["factors"]?.arrayValue?.isEmpty == true && listed["recoveryCodesLeft"] == 0)
            // No factor left: sign-ins go straight through, and a step-up has nothing to ask.
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            #expect(
                try await stack.send(.post, "/v1/users/me/factors/challenge", bearer: strong).errorCode
                    == "second_factor_not_enrolled")
        }
    }

    @Test("a factor added before the first one was active is verified only by a session that proved that one")
    func pendingFactorNeedsStepUp() async throws {
        try await Stack.run(Self.configure) { stack in
            // A thief's session adds a factor of theirs while the person has none active.
            let thief = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            let added = try await stack.send(.post, "/v1/users/me/factors", bearer: thief, json: ["type": "totp"])
                .json()
            let theirs = try TestAuthenticator(base32: try #require(added["secret"]?.stringValue), clock: stack.clock)
            let owner = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            _ = try await Self.enroll(stack, bearer: owner)
            let refused = try await stack.send(
                .post, "/v1/users/me/factors/\(try #require(added["id"]?.stringValue))/verify", bearer: thief,
                json: ["code": .string(theirs.code())])
            #expect(try Self.challenge(of: refused, status: .forbidden).isEmpty == false)
            let listed = try await stack.get("/v1/users/me/factors", bearer: owner).json()["factors"]?.arrayValue
            #expect(listed?.filter { $0["status"] == "active" }.count == 1)
        }
    }

    @Test("requests a stranger could shape are refused with typed 4xx and change nothing")
    func badInput() async throws {
        try await Stack.run(Self.configure) { stack in
            let bearer = try #require(try await Self.signIn(stack)["access_token"]?.stringValue)
            #expect(
                try await stack.send(.post, "/v1/users/me/factors", bearer: bearer, json: ["type": "sms"]).errorCode
                    == "invalid_request")
            #expect(
                try await stack.send(
                    .post, "/v1/users/me/factors", bearer: bearer,
                    json: ["type": "totp", "displayName": .string(String(repeating: "x", count: 65))]
                ).errorCode == "invalid_request")
            #expect(
                try await stack.send(.post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp", "x": 1])
                    .errorCode == "invalid_request")
            // An explicit null is not a string (the fuzzer's find: the document says string).
            #expect(
                try await stack.send(
                    .post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp", "displayName": .null]
                ).errorCode == "invalid_request")
            #expect(
                try await stack.post(
                    "/v1/auth/factor", json: ["challenge": "nope", "code": .null, "recoveryCode": "x"]
                )
                .errorCode == "invalid_request")
            #expect(try await Self.complete(stack, "nope", code: "123456").errorCode == "factor_challenge_invalid")
            #expect(
                try await stack.post("/v1/auth/factor", json: ["challenge": "nope"]).errorCode == "invalid_request")
            #expect(
                try await stack.post(
                    "/v1/auth/factor", json: ["challenge": "nope", "code": "1", "recoveryCode": "2"]
                ).errorCode == "invalid_request")
            #expect(
                try await stack.send(.delete, "/v1/users/me/factors/unknown", bearer: bearer).errorCode
                    == "factor_not_found")
            #expect(try await stack.get("/v1/users/me/factors").errorCode == "unauthorized")
            // At most ten factors, pending ones included.
            for _ in 0..<10 {
                #expect(
                    try await stack.send(.post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp"]).status
                        == .created)
            }
            #expect(
                try await stack.send(.post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp"]).errorCode
                    == "too_many_factors")
        }
    }
}
