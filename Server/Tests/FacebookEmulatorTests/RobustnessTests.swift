import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import NIOCore
import Testing

@testable import FacebookEmulator

@Suite("Bad input answers as Facebook would, never with a Swift error")
struct RobustnessTests {
    @Test("unknown paths and methods get a Graph error envelope")
    func unknownPaths() async throws {
        try await withEmulator { emulator in
            for path in ["/v21.0/a/b/c/d", "/dialog", "/%ZZ", "/v99.9/oauth/nothing"] {
                let response = try await emulator.get(path)
                #expect(response.status == .badRequest)
                #expect(try response.json()["error"]?["type"] == "OAuthException")
                #expect(response.headers[.init("x-fb-trace-id")!] != nil)
            }
            let put = try await emulator.client.execute(uri: "/me", method: .put)
            #expect(try put.graphError().code != nil)
        }
    }

    @Test("a body over the limit is refused with 413")
    func oversizedBody() async throws {
        try await withEmulator({ $0.maximumBodySize = 2048 }) { emulator in
            let response = try await emulator.client.execute(
                uri: "/oauth/access_token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "code=" + String(repeating: "A", count: 4096)))
            #expect(response.status == .contentTooLarge)
        }
    }

    @Test("malformed JSON, percent-encoding and odd parameters do not crash")
    func malformedInput() async throws {
        try await withEmulator { emulator in
            let badJSON = try await emulator.client.execute(
                uri: "/_emulator/tokens", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{not json"))
            #expect(try badJSON.json()["error"]?["code"] == "missing_field")
            let badPercent = try await emulator.get("/me?access_token=%E0%A4&fields=%zz")
            #expect(try badPercent.graphError().code == 190)
            let emptyFields = try await emulator.get(
                EmulatorClient.path("/debug_token", [("input_token", ""), ("access_token", Demo.appToken)]))
            #expect(try emptyFields.graphError().code == 100)
            let hugeLifetime = try await emulator.post(
                "/_emulator/tokens", json: ["app_id": .string(Demo.appID), "user": "alice", "lifetime_seconds": "soon"])
            #expect(try hugeLifetime.json()["error"]?["code"] == "invalid_field")
        }
    }
}

@Suite("Parsing helpers")
struct ParsingTests {
    @Test("fields= keeps modifiers and ignores nesting commas")
    func fieldSelection() {
        let selection = FieldSelection(parsing: "id, picture.type(large).width(300),friends.limit(2){id,name},email,id")
        #expect(selection.fields.map(\.name) == ["id", "picture", "friends", "email"])
        #expect(selection.fields[1].modifiers == ["type": "large", "width": "300"])
        #expect(selection.fields[2].modifiers == ["limit": "2"])
        #expect(FieldSelection(parsing: "  ") == .defaultFields)
    }

    @Test("form encoding round-trips and writes + for spaces")
    func formEncoding() {
        let pairs = [("a b", "c&d=e"), ("state", "{\"challenge\":\"x/y\"}")]
        let encoded = FormEncoding.encode(pairs)
        #expect(encoded == "a+b=c%26d%3De&state=%7B%22challenge%22%3A%22x%2Fy%22%7D")
        #expect(FormEncoding.decode(encoded) == ["a b": "c&d=e", "state": "{\"challenge\":\"x/y\"}"])
    }

    @Test("base64url decodes padded and unpadded, rejects junk")
    func base64URL() {
        #expect(Base64URL.encode(Data([0xfb, 0xff])) == "-_8")
        #expect(Base64URL.decode("-_8") == Data([0xfb, 0xff]))
        #expect(Base64URL.decode("-_8=") == Data([0xfb, 0xff]))
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("a=b") == nil)
    }

    @Test(
        "Graph version prefixes are recognised",
        arguments: [
            ("v21.0", true), ("v2.3", true), ("v9", true), ("vx", false), ("v", false), ("me", false),
            ("v1.2.3", false),
        ])
    func versions(segment: String, isVersion: Bool) {
        #expect(EmulatorRequest.isGraphVersion(segment) == isVersion)
    }

    @Test("redirect URIs match exactly, plus Facebook's implicit iOS and desktop ones")
    func redirectMatching() {
        let app = EmulatorApp(id: "123", secret: "s", name: "A", redirectURIs: ["https://app.example/cb"])
        #expect(app.accepts(redirectURI: "https://app.example/cb"))
        #expect(!app.accepts(redirectURI: "https://app.example/cb/"))
        #expect(!app.accepts(redirectURI: "https://app.example/cb?x=1"))
        #expect(app.accepts(redirectURI: "fb123://authorize"))
        #expect(app.accepts(redirectURI: "fb123lite://authorize"))
        #expect(!app.accepts(redirectURI: "fb1234://authorize"))
        #expect(!app.accepts(redirectURI: "fb123://authorize.evil"))
        #expect(app.accepts(redirectURI: "https://www.facebook.com/connect/login_success.html"))
    }
}

@Suite("Configuration and seeds")
struct ConfigurationTests {
    @Test("the demo seed and default configuration are valid")
    func demoIsValid() throws {
        try EmulatorConfiguration().validate()
    }

    @Test(
        "bad seeds are refused with a message naming the problem",
        arguments: [
            #"{"apps":[{"id":"abc","secret":"s"}]}"#: "must be numeric",
            #"{"apps":[{"id":"1","secret":"a|b"}]}"#: "without '|'",
            #"{"apps":[{"id":"1","secret":"s"},{"id":"1","secret":"t"}]}"#: "appears twice",
            #"{"users":[{"key":"a","name":"A","birthday":"1990-01-01"}]}"#: "MM/DD/YYYY",
            #"{"users":[{"key":"a","name":"A","friends":["b"]}]}"#: "unknown friend",
            #"{"users":[{"key":"a","name":"A","grants":{"9":["email"]}}]}"#: "unknown app",
        ])
    func badSeeds(json: String, expected: String) throws {
        let seed = try JSONDecoder().decode(EmulatorSeed.self, from: Data(json.utf8))
        #expect {
            try seed.validate()
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test("a seed file loads apps, users with grants and derived names")
    func loadSeedFile() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("seed-\(UUID().uuidString).json")
        try Data(
            #"{"apps":[{"id":"77","secret":"s","name":"Seeded","redirect_uris":["x://cb"]}],"users":[{"key":"zoe","name":"Zoe Q Public","grants":{"77":["email"]}}]}"#
                .utf8
        ).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let seed = try EmulatorSeed.load(contentsOf: url)
        #expect(seed.users.first?.person.firstName == "Zoe" && seed.users.first?.person.lastName == "Public")
        try await withEmulator({ $0.seed = seed }) { emulator in
            let data = try await emulator.get(
                EmulatorClient.path("/\(Demo.id("zoe", app: "77"))", [("access_token", "77|s"), ("fields", "name")]))
            #expect(try data.json() == ["id": .string(Demo.id("zoe", app: "77")), "name": "Zoe Q Public"])
        }
        #expect(throws: EmulatorConfigurationError.self) {
            try EmulatorSeed.load(contentsOf: url.appendingPathExtension("missing"))
        }
    }

    @Test("the same signing key twice in a seed is published once")
    func duplicateSeedKeys() async throws {
        let pem = try SigningKey.generate(now: Demo.start).privateKey.pemRepresentation
        try await withEmulator({ $0.seed.signingKeys = [pem, pem] }) { emulator in
            let jwks = try await emulator.get("/.well-known/oauth/openid/jwks/").json()
            #expect(jwks["keys"]?.arrayValue?.count == 1)
            #expect(try await emulator.get("/.well-known/oauth/openid/certs/").status == .ok)
        }
    }

    @Test("out-of-range settings are refused")
    func badSettings() {
        for configure: (inout EmulatorConfiguration) -> Void in [
            { $0.port = 70_000 }, { $0.publicURL = "ftp://x" }, { $0.issuer = "not a url" }, { $0.codeLifetime = 0 },
        ] {
            var configuration = EmulatorConfiguration()
            configure(&configuration)
            #expect(throws: EmulatorConfigurationError.self) { try configuration.validate() }
        }
    }
}
