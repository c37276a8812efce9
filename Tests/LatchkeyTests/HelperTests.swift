import Crypto
import Foundation
import Latchkey
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import LatchkeyCore

@Suite("SDK helpers")
struct HelperTests {
    @Test("nonces are random, long enough, and hash to SHA-256 hex")
    func nonce() {
        let one = Nonce()
        let two = Nonce()
        #expect(one.raw.count == 32 && one != two)
        #expect(Nonce(length: 4).raw.count == 16)
        #expect(Nonce(raw: "abc").sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("FacebookLoginConfiguration refuses what Facebook's SDK refuses")
    func loginConfiguration() {
        #expect(
            FacebookLoginConfiguration(permissions: ["email", "user_friends"], tracking: .limited, nonce: "n-1") != nil)
        #expect(FacebookLoginConfiguration(nonce: "") == nil)
        #expect(FacebookLoginConfiguration(nonce: "has space") == nil)
        #expect(FacebookLoginConfiguration(nonce: "tab\there") == nil)
        #expect(FacebookLoginConfiguration(nonce: "new\nline") != nil)  // newlines are not refused by Facebook's SDK
        #expect(FacebookLoginConfiguration(permissions: ["Email"]) == nil)
        #expect(FacebookLoginConfiguration(permissions: [""]) == nil)
        #expect(FacebookLoginConfiguration(permissions: ["user-friends"]) == nil)
        let limited = FacebookLoginConfiguration(permissions: ["email", "pages_show_list"], tracking: .limited)
        #expect(limited?.permissionsUnavailableInLimitedLogin == ["pages_show_list"])
    }

    @Test("auth states follow FBSession's transition table")
    func transitions() {
        #expect(AuthState.created.canMove(to: .opening))
        #expect(AuthState.opening.canMove(to: .open))
        #expect(AuthState.open.canMove(to: .openTokenExtended))
        #expect(AuthState.openTokenExtended.canMove(to: .openTokenExtended))
        #expect(AuthState.open.canMove(to: .closed))
        #expect(AuthState.createdTokenLoaded.canMove(to: .closed))
        #expect(!AuthState.closed.canMove(to: .open))
        #expect(!AuthState.open.canMove(to: .opening))
        #expect(!AuthState.opening.canMove(to: .closed))
        #expect(AuthState.allCases.allSatisfy { !$0.canMove(to: .created) })
    }

    @Test(
        "error categories",
        arguments: [
            ("facebook_token_expired", 401, "reopenSession"), ("session_revoked", 401, "reopenSession"),
            ("facebook_unavailable", 503, "transient"), ("network_unavailable", 0, "transient"),
            ("facebook_rate_limited", 503, "throttling"), ("property_not_writable", 403, "permissions"),
            ("internal_error", 500, "server"), ("invalid_request", 400, "other"),
            ("user_cancelled", 0, "userCancelled"), ("facebook_checkpoint", 403, "transient"),
            ("facebook_permission_denied", 403, "permissions"), ("facebook_code_invalid", 0, "reopenSession"),
        ])
    func categories(code: String, status: Int, category: String) {
        let error = LatchkeyError(code: .init(rawValue: code), message: "m", httpStatus: status == 0 ? nil : status)
        #expect(error.category.description == category)
        #expect((error.userMessage != nil) == error.shouldNotifyUser)
    }

    @Test("the file store round-trips, is private, and drops corrupt files")
    func fileStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "latchkey-sdk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("session.json")
        let store = FileCredentialStore(url: url)
        #expect(try await store.load() == nil)
        let user = LatchkeyUser(UserBody(id: "u", properties: ["name": "A"], identities: [], createdAt: 1))
        let credentials = StoredCredentials(
            accessToken: "a", accessTokenExpiresAt: Date(timeIntervalSince1970: 10), refreshToken: "r", user: user,
            serverURL: URL(string: "http://x")!, refreshedAt: Date(timeIntervalSince1970: 1))
        try await store.save(credentials)
        #expect(try await store.load() == credentials)
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        try Data("garbage".utf8).write(to: url)
        #expect(try await store.load() == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}

@Suite("Easy Login request")
struct EasyLoginRequestTests {
    static let server = URL(string: "https://auth.example.com")!

    func answer(_ request: EasyLoginRequest, _ pairs: [(String, String)], base: String? = nil) -> URL {
        URL(string: (base ?? request.redirectURI) + "?" + FormEncoding.encode(pairs))!
    }

    /// What reading the redirect with `pairs` gives: `code:VALUE` or the error code.
    func read(_ request: EasyLoginRequest, _ pairs: [(String, String)], base: String? = nil) -> String {
        do throws(LatchkeyError) {
            return "code:" + (try request.code(from: answer(request, pairs, base: base), issuer: Self.server))
        } catch {
            return error.code.rawValue
        }
    }

    @Test("the URL carries PKCE S256, state, scope and mapping; the verifier stays in the app")
    func url() throws {
        let request = EasyLoginRequest(
            serverURL: Self.server, clientID: "ios", redirectURI: "myapp://auth", permissions: ["email"],
            fieldsMapping: ["email": "mail"])
        let query = FormEncoding.decode(try #require(request.url.query))
        #expect(request.url.path == "/v1/oauth/authorize")
        #expect(query["code_challenge_method"] == "S256" && query["response_type"] == "code")
        #expect(query["code_challenge"]?.count == 43 && query["code_challenge"] != request.codeVerifier)
        #expect(query["scope"] == "public_profile email" && query["fields_mapping"] == "email=mail")
        #expect(query["state"] == request.state && !request.url.absoluteString.contains(request.codeVerifier))
        #expect((43...128).contains(request.codeVerifier.count))
    }

    @Test("redirects are read strictly: state, issuer, errors, missing code, foreign URLs")
    func redirects() {
        let request = EasyLoginRequest(serverURL: Self.server, clientID: "ios", redirectURI: "myapp://auth")
        let state = request.state
        let iss = Self.server.absoluteString
        #expect(read(request, [("code", "c1"), ("state", state), ("iss", iss)]) == "code:c1")
        #expect(read(request, [("code", "c1"), ("state", "x")]) == "state_mismatch")
        #expect(read(request, [("code", "c1"), ("state", state)]) == "issuer_mismatch")
        #expect(
            read(request, [("code", "c1"), ("state", state), ("iss", "https://evil.example")]) == "issuer_mismatch")
        #expect(read(request, [("error", "access_denied"), ("state", state), ("iss", iss)]) == "user_cancelled")
        #expect(
            read(
                request, [("error", "access_denied"), ("error_code", "user_disabled"), ("state", state), ("iss", iss)])
                == "user_disabled")
        #expect(read(request, [("state", state), ("iss", iss)]) == "invalid_response")
        #expect(read(request, [("code", "c1"), ("state", state)], base: "myapp://other") == "invalid_response")
        let loopback = EasyLoginRequest(
            serverURL: Self.server, clientID: "cli", redirectURI: "http://127.0.0.1:5000/cb")
        #expect(loopback.isRedirect(URL(string: "http://127.0.0.1:5000/cb?code=1")!))
        #expect(!loopback.isRedirect(URL(string: "http://127.0.0.1:5000/other?code=1")!))
    }
}

@Suite("Base64URL")
struct Base64URLTests {
    @Test("matches Foundation's base64 with the URL alphabet, both ways, for every length")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let reference = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference)
            #expect(Base64URL.decode(reference) == bytes)
            #expect(
                Base64URL.decode(
                    bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                        .replacingOccurrences(of: "/", with: "_")) == bytes)  // padded
        }
    }

    @Test("refuses what is not canonical base64url", arguments: ["a", "ab+c", "ab/c", "AB", "A=BC", "é"])
    func refuses(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

@Suite("JSONValue reader and writer")
struct JSONValueBytesTests {
    @Test("parses what Foundation parses, and writes sorted compact JSON that parses back to the same value")
    func roundTrip() throws {
        let document = #"""
            {"s":"a\"b\\c\/d\n\t\u00e9\ud83d\ude00é","i":-42,"z":0,"d":1.5,"e":-2.5e-3,"big":12345678901234567890,
             "t":true,"f":false,"n":null,"a":[1,[2,{}],[]],"o":{"k":{"deep":"x"}}, "ws" : [ 1 , 2 ] }
            """#
        let value = try JSONValue.parse(Data(document.utf8))
        #expect(value["s"] == .string("a\"b\\c/d\n\té😀é"))
        #expect(value["i"] == .int(-42) && value["z"] == .int(0) && value["d"] == .double(1.5))
        #expect(value["e"] == .double(-0.0025) && value["big"] == .double(12_345_678_901_234_567_168))
        #expect(value["t"] == .bool(true) && value["n"] == .null && value["ws"] == [1, 2])
        #expect(value["o"]?["k"]?["deep"] == "x")
        let written = value.encoded()
        #expect(try JSONValue.parse(written) == value)
        #expect(try JSONSerialization.jsonObject(with: written) is [String: Any])
        #expect(
            String(decoding: JSONValue.object(["b": 1, "a": "x/y", "c": "\u{01}"]).encoded(), as: UTF8.self)
                == #"{"a":"x/y","b":1,"c":"\u0001"}"#)
        // Escapes at the start, between and at the end of unescaped runs.
        #expect(
            String(decoding: JSONValue.string("\"ab\\c\n\r\td\u{1F}é\"").encoded(), as: UTF8.self)
                == #""\"ab\\c\n\r\td\u001fé\"""#)
    }

    @Test(
        "refuses malformed JSON",
        arguments: [
            "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "tru", "nul", "\"abc", "\"a\u{01}b\"",
            "\"\\x\"", "\"\\ud800\"", "\"\\udc00x\"", "{\"a\" 1}", "[1 2]", "1 2", "{1:2}", "\"\\u12G4\"",
        ])
    func refuses(text: String) {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Data(text.utf8)) }
    }

    @Test("refuses documents nested deeper than 64")
    func depth() throws {
        #expect(throws: JSONValue.ParseError.self) {
            try JSONValue.parse(Data((String(repeating: "[", count: 65) + String(repeating: "]", count: 65)).utf8))
        }
        _ = try JSONValue.parse(Data((String(repeating: "[", count: 60) + String(repeating: "]", count: 60)).utf8))
    }
}

@Suite("Loopback redirect matching")
struct LoopbackRedirectTests {
    @Test("loopback IP literals match on any port; everything else only exactly")
    func keys() {
        let same = LoopbackRedirect.matchKey
        #expect(same("http://127.0.0.1:5000/cb") == same("http://127.0.0.1/cb"))
        #expect(same("http://[::1]:5000/cb") == same("http://[::1]:6000/cb"))
        #expect(same("http://127.0.0.1:5000/cb") != same("http://127.0.0.1:5000/cb2"))
        #expect(same("http://127.0.0.1:5000/cb") != same("http://[::1]:5000/cb"))
        #expect(same("http://localhost:5000/cb") != same("http://localhost/cb"))
        #expect(same("https://127.0.0.1:5000/cb") != same("https://127.0.0.1/cb"))
        #expect(same("myapp://auth") == "myapp://auth")
    }
}
