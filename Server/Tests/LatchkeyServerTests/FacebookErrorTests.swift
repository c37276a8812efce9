import FacebookEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// What Facebook can say about a person's token, and what Latchkey answers: a typed 4xx or a 503,
/// never a 500; only the server's own credentials being refused is a 500.
@Suite("Facebook errors about a person's credential")
struct FacebookErrorTests {
    static let thirdApp = EmulatorApp(id: "100000000000003", secret: "third-app-secret", name: "Third App")
    static let secondApp = (id: "100000000000002", secret: "second-app-secret-change-me")

    @Test("a token of another Facebook app is 401 facebook_token_wrong_app, as Facebook answers debug_token with 400")
    func wrongApp() async throws {
        try await Stack.run { stack in
            let foreign = try await stack.facebookToken(app: Demo.otherAppID)
            let response = try await stack.signIn(["accessToken": .string(foreign)])
            #expect(response.status == .unauthorized && response.errorCode == "facebook_token_wrong_app")
            // Not mistaken for our own secret being wrong.
            #expect(try await stack.get("/ready").json()["facebook"] == "ok")
        }
    }

    @Test("with several apps, GET /app names the token's app: three calls, and wrong apps still refused")
    func severalApps() async throws {
        try await Stack.run(
            emulatorSeed: { $0.apps.append(Self.thirdApp) },
            {
                $0.facebook.apps = [
                    .init(id: Demo.appID, secret: Demo.secret),
                    .init(id: Self.thirdApp.id, secret: Self.thirdApp.secret),
                ]
            }
        ) { stack in
            for app in [Demo.appID, Self.thirdApp.id] {
                let token = try await stack.facebookToken(app: app)
                try await stack.emulatorDelete("/_emulator/calls")
                let response = try await stack.signIn(["accessToken": .string(token)])
                #expect(response.status == .ok, "\(app)")
                #expect(try response.json()["user"]?["identities"]?.arrayValue?.first?["appId"] == .string(app))
                let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
                // A person's first sign-in with several apps also asks for their
                // `token_for_business` (`/{id}`), to join them across the business's apps.
                #expect(calls == ["/app": 1, "/debug_token": 1, "/me": 1, "/{id}": 1], "\(app)")
            }
            // The second demo app requires appsecret_proof, so /app refuses a proof-less call; the
            // server then asks each app's debug_token, and neither owns the token.
            let foreign = try await stack.facebookToken(app: Demo.otherAppID)
            #expect(try await stack.signIn(["accessToken": .string(foreign)]).errorCode == "facebook_token_wrong_app")
        }
    }

    @Test("an app that requires appsecret_proof is found through debug_token when several apps are served")
    func severalAppsWithProof() async throws {
        try await Stack.run({
            $0.facebook.apps = [
                .init(id: Demo.appID, secret: Demo.secret), .init(id: Self.secondApp.id, secret: Self.secondApp.secret),
            ]
        }) { stack in
            let token = try await stack.facebookToken(app: Self.secondApp.id)
            let response = try await stack.signIn(["accessToken": .string(token)])
            #expect(response.status == .ok)
            #expect(
                try response.json()["user"]?["identities"]?.arrayValue?.first?["appId"] == .string(Self.secondApp.id))
        }
    }

    /// A Graph error injected on one endpoint, and what the client must get.
    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let endpoint: String
        let fault: JSONValue
        let status: HTTPResponse.Status
        let code: String
        /// Whether `/ready` must then report our credentials refused.
        var credentialsRefused: Bool = false
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "checkpoint (459)", endpoint: "/me",
            fault: [
                "code": 190, "subcode": 459,
                "message":
                    "Error validating access token: You cannot access the app till you log in to www.facebook.com and follow the instructions given.",
            ],
            status: .forbidden, code: "facebook_checkpoint"),
        Case(
            name: "unconfirmed user (464)", endpoint: "/debug_token",
            fault: [
                "code": 190, "subcode": 464,
                "message":
                    "Error validating access token: Sessions for the user are not allowed because the user is not a confirmed user.",
            ],
            status: .forbidden, code: "facebook_checkpoint"),
        Case(
            name: "checkpoint, no subcode", endpoint: "/me",
            fault: [
                "code": 190,
                "message":
                    "Error validating access token: You cannot access the app till you log in to www.facebook.com and follow the instructions given.",
            ],
            status: .forbidden, code: "facebook_checkpoint"),
        Case(
            name: "unconfirmed user, no subcode", endpoint: "/debug_token",
            fault: [
                "code": 190,
                "message":
                    "Error validating access token: Sessions for the user are not allowed because the user is not a confirmed user.",
            ],
            status: .forbidden, code: "facebook_checkpoint"),
        Case(
            name: "expired, no subcode", endpoint: "/me",
            fault: ["code": 190, "message": "Error validating access token"],
            status: .unauthorized, code: "facebook_token_invalid"),
        Case(
            name: "expired, no subcode, Facebook's words (bk-rs capture)", endpoint: "/me",
            fault: [
                "code": 190,
                "message":
                    "Error validating access token: Session has expired on Thursday, 06-Oct-22 00:00:00 PDT. The current time is Tuesday, 22-Nov-22 19:54:40 PST.",
            ],
            status: .unauthorized, code: "facebook_token_expired"),
        Case(
            name: "password changed, no subcode", endpoint: "/debug_token",
            fault: [
                "code": 190,
                "message":
                    "Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.",
            ],
            status: .unauthorized, code: "facebook_password_changed"),
        Case(
            name: "application limit (4)", endpoint: "/debug_token", fault: ["preset": "rate_limit_app"],
            status: .serviceUnavailable, code: "facebook_rate_limited"),
        Case(
            name: "page limit (32)", endpoint: "/me",
            fault: ["code": 32, "message": "(#32) Page request limit reached"],
            status: .serviceUnavailable, code: "facebook_rate_limited"),
        Case(
            name: "custom limit (613)", endpoint: "/me", fault: ["preset": "rate_limit_custom"],
            status: .serviceUnavailable, code: "facebook_rate_limited"),
        Case(
            name: "malformed token", endpoint: "/me",
            fault: ["code": 190, "message": "Invalid OAuth access token - Cannot parse access token"],
            status: .unauthorized, code: "facebook_token_invalid"),
        Case(
            name: "API session (102)", endpoint: "/me", fault: ["code": 102, "message": "Session key invalid"],
            status: .unauthorized, code: "facebook_token_invalid"),
        Case(
            name: "missing permission (10)", endpoint: "/me",
            fault: ["code": 10, "message": "(#10) Application does not have permission for this action"],
            status: .forbidden, code: "facebook_permission_denied"),
        Case(
            name: "permission (200)", endpoint: "/me", fault: ["code": 200, "message": "(#200) Permissions error"],
            status: .forbidden, code: "facebook_permission_denied"),
        Case(
            name: "blocked (368)", endpoint: "/me",
            fault: ["code": 368, "message": "The action attempted has been deemed abusive or is otherwise disallowed"],
            status: .forbidden, code: "facebook_checkpoint"),
        Case(
            name: "active token required (2500)", endpoint: "/me",
            fault: [
                "code": 2500,
                "message": "An active access token must be used to query information about the current user.",
            ],
            status: .unauthorized, code: "facebook_token_invalid"),
        Case(
            name: "unknown error (1), not flagged transient", endpoint: "/me",
            fault: ["code": 1, "message": "An unknown error has occurred."], status: .serviceUnavailable,
            code: "facebook_unavailable"),
        Case(
            name: "business use case throttling (80004)", endpoint: "/debug_token",
            fault: ["code": 80004, "message": "There have been too many calls to this ad-account."],
            status: .serviceUnavailable, code: "facebook_rate_limited"),
        Case(
            name: "user throttling (17)", endpoint: "/me", fault: ["preset": "rate_limit_user"],
            status: .serviceUnavailable, code: "facebook_rate_limited"),
        Case(
            name: "an unknown code", endpoint: "/me", fault: ["code": 12345, "message": "Something new"],
            status: .unauthorized, code: "facebook_token_invalid"),
        Case(
            name: "debug_token refuses our app token (our fault)", endpoint: "/debug_token",
            fault: [
                "code": 100,
                "message":
                    "(#100) You must provide an app access token, or a user access token that is an owner or developer of the app",
            ],
            status: .internalServerError, code: "internal_error", credentialsRefused: true),
        Case(
            name: "debug_token says the app token's signature is wrong (our fault)", endpoint: "/debug_token",
            fault: ["code": 190, "message": "Invalid OAuth access token signature."],
            status: .internalServerError, code: "internal_error", credentialsRefused: true),
        Case(
            name: "debug_token refuses the client secret with code 1 (our fault, not Facebook trouble)",
            endpoint: "/debug_token", fault: ["code": 1, "message": "Error validating client secret."],
            status: .internalServerError, code: "internal_error", credentialsRefused: true),
        Case(
            name: "debug_token answers an error it never gave before: the token's, not ours", endpoint: "/debug_token",
            fault: ["code": 190, "message": "Malformed access token EAAsomethingsomethingsomething"],
            status: .unauthorized, code: "facebook_token_invalid"),
        Case(
            name: "/me refuses a field this Graph version no longer has (our field list)", endpoint: "/me",
            fault: ["code": 100, "message": "(#100) Tried accessing nonexisting field (picture) on node type (User)"],
            status: .internalServerError, code: "internal_error"),
        Case(
            name: "/me refuses the proof of a token debug_token vouched for (our fault)", endpoint: "/me",
            fault: [
                "code": 100, "type": "GraphMethodException",
                "message": "Invalid appsecret_proof provided in the API argument",
            ],
            status: .internalServerError, code: "internal_error", credentialsRefused: true),
    ]

    @Test("each Graph error gets its typed answer", arguments: cases)
    func graphErrors(_ example: Case) async throws {
        try await Stack.run { stack in
            let token = try await stack.facebookToken()
            var fault = example.fault.objectValue ?? [:]
            fault["endpoint"] = .string(example.endpoint)
            _ = try await stack.emulator("/_emulator/faults", .object(fault))
            let response = try await stack.signIn(["accessToken": .string(token)])
            #expect(response.status == example.status)
            #expect(response.errorCode == example.code)
            let ready = try await stack.get("/ready").json()["facebook"]
            #expect((ready == "credentials_refused") == example.credentialsRefused)
        }
    }

    @Test("a token with a control character is refused before any Graph call")
    func headerInjection() async throws {
        try await Stack.run { stack in
            try await stack.emulatorDelete("/_emulator/calls")
            for token in ["EAA\r\nX-Injected: 1", "EAA token", "EAA\u{7F}"] {
                let response = try await stack.signIn(["accessToken": .string(token)])
                #expect(response.status == .unauthorized && response.errorCode == "facebook_token_invalid")
            }
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"] == [:])
        }
    }

    @Test("the app secret and app token never sit in a URL; tokens travel in the Authorization header")
    func secretsOutOfURLs() async throws {
        try await Stack.run(browsable: true) { stack in
            try await stack.emulatorDelete("/_emulator/requests")
            _ = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            _ = try await EasyLoginTests.redirect(stack)
            let requests = try await stack.emulatorGET("/_emulator/requests")["requests"]?.arrayValue ?? []
            let endpoints = Set(requests.compactMap { $0["endpoint"]?.stringValue })
            #expect(endpoints.isSuperset(of: ["/debug_token", "/me", "/oauth/access_token"]))
            for request in requests {
                let query = request["query"]?.stringValue ?? ""
                #expect(!query.contains(Demo.secret) && !query.contains("access_token="), "\(request)")
                #expect(!query.contains("client_secret"), "\(request)")
                if ["/debug_token", "/me"].contains(request["endpoint"]?.stringValue ?? "") {
                    #expect(request["authorization_scheme"] == "Bearer", "\(request)")
                }
            }
        }
    }
}

/// Facebook's answers to Easy Login's code exchange.
@Suite("Facebook errors on Easy Login's code exchange")
struct CodeExchangeErrorTests {
    /// A fault on the token endpoint, and the OAuth error and Latchkey code the app must get.
    struct Case: Sendable, CustomStringConvertible {
        let fault: JSONValue
        let error: String
        let code: String
        var description: String { "\(fault) → \(error)/\(code)" }
    }

    static let cases: [Case] = [
        Case(
            fault: ["code": 100, "subcode": 36009, "message": "This authorization code has been used."],
            error: "access_denied", code: "facebook_code_invalid"),
        Case(
            fault: ["code": 100, "subcode": 36007, "message": "This authorization code has expired."],
            error: "access_denied", code: "facebook_code_invalid"),
        Case(
            fault: ["code": 100, "message": "Invalid verification code format."], error: "access_denied",
            code: "facebook_code_invalid"),
        Case(
            fault: ["code": 100, "message": "This authorization code has been used."], error: "access_denied",
            code: "facebook_code_invalid"),
        Case(
            fault: ["code": 1, "subcode": 33, "message": "Error validating client secret."], error: "server_error",
            code: "internal_error"),
        Case(
            fault: ["code": 101, "message": "Error validating application. Invalid application ID."],
            error: "server_error", code: "internal_error"),
        Case(
            fault: [
                "code": 100, "subcode": 36008,
                "message":
                    "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request",
            ], error: "access_denied", code: "facebook_code_invalid"),
        Case(fault: ["preset": "rate_limit_app"], error: "temporarily_unavailable", code: "facebook_rate_limited"),
    ]

    @Test(
        "a used, expired or forged code goes back to the app as access_denied; our own misconfiguration as server_error",
        arguments: cases)
    func exchange(_ example: Case) async throws {
        try await Stack.run(browsable: true) { stack in
            var fault = example.fault.objectValue ?? [:]
            fault["endpoint"] = "/oauth/access_token"
            let body = JSONValue.object(fault)
            let answer = try await EasyLoginTests.redirect(stack) {
                _ = try await stack.emulator("/_emulator/faults", body)
            }
            #expect(answer["error"] == example.error)
            #expect(answer["error_code"] == example.code)
            #expect(answer["code"] == nil)
        }
    }
}

/// The one place Graph errors are judged, checked directly.
@Suite("Facebook error triage")
struct FacebookTriageTests {
    @Test("debug_token's top-level errors: the input token's fault, Facebook's, or ours")
    func inspection() {
        func code(_ failure: GraphFailure) -> ErrorCode { FacebookTriage.inspection(failure).code }
        #expect(
            code(
                .init(
                    status: 400, code: 100,
                    message: "(#100) The App_id in the input_token did not match the Viewing App"))
                == .facebookWrongApp)
        #expect(
            code(.init(status: 400, code: 190, message: "Invalid OAuth access token - Debug only access token"))
                == .facebookNotUserToken)
        #expect(code(.init(status: 400, code: 190, message: "Invalid OAuth access token signature.")) == .internalError)
        #expect(code(.init(status: 500, code: 2, message: "x", isTransient: true)) == .facebookUnavailable)
        #expect(
            code(.init(status: 403, code: 4, message: "(#4) Application request limit reached")) == .facebookRateLimited
        )
    }

    @Test("no error about a person's token or code is a 500 unless Facebook's words say our credentials")
    func neverServerError() {
        let messages = [
            "m", "Invalid OAuth access token - Cannot parse access token", "Malformed access token EAAx",
            "(#100) The App_id in the input_token did not match the Viewing App",
            "This authorization code has been used.",
            "Error validating verification code. Please make sure your redirect_uri is identical",
        ]
        let codes = [
            1, 2, 3, 4, 9, 10, 12, 17, 32, 100, 102, 190, 200, 250, 299, 341, 368, 412, 506, 613, 2500, 80_001, 99_999,
        ]
        for code in codes {
            for subcode in [nil, 33, 458, 459, 460, 463, 464, 466, 467, 492, 36007, 36008, 36009] as [Int?] {
                for message in messages {
                    let failure = GraphFailure(status: 400, code: code, subcode: subcode, message: message)
                    for (name, error) in [
                        ("userToken", FacebookTriage.userToken(failure)),
                        ("inspection", FacebookTriage.inspection(failure)),
                        ("codeExchange", FacebookTriage.codeExchange(failure)),
                    ] {
                        #expect(
                            error.status.code < 500 || error.status == .serviceUnavailable,
                            "\(name) \(code)/\(subcode ?? 0) \(message)")
                    }
                }
            }
        }
        for message in ["Error validating client secret.", "Invalid OAuth access token signature."] {
            let failure = GraphFailure(status: 400, code: 1, message: message)
            #expect(FacebookTriage.inspection(failure).cause is CredentialRefusal)
            #expect(FacebookTriage.codeExchange(failure).cause is CredentialRefusal)
        }
    }

    @Test("Facebook's messages are logged without the tokens some of them echo")
    func safeMessage() {
        let token = "EAA" + String(repeating: "x", count: 40)
        let failure = GraphFailure(
            status: 400, code: 190, message: "Malformed access token \(token). Try 100000000000001|secretsecretsecret")
        #expect(!failure.description.contains(token) && !failure.description.contains("secretsecret"))
        #expect(failure.description.contains("Malformed access token"))
    }
}
