import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Testing

@testable import FacebookEmulator

/// What the test receiver saw.
actor ReceivedCallbacks {
    var signedRequests: [String] = []
    func record(_ value: String) { signedRequests.append(value) }
}

@Suite("Deauthorize and data-deletion callbacks")
struct CallbackTests {
    /// A receiver in the role of an app backend: it records `signed_request` and answers as told.
    static func withReceiver(
        deletionReply: String, _ body: @escaping @Sendable (Int, ReceivedCallbacks) async throws -> Void
    ) async throws {
        let received = ReceivedCallbacks()
        let router = Router()
        router.post("/facebook/{kind}") { request, _ -> Response in
            let form = FormEncoding.decode(String(buffer: try await request.body.collect(upTo: 65_536)))
            await received.record(form["signed_request"] ?? "")
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: .init(string: deletionReply)))
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await receiver.test(.live) { client in
            try await body(try #require(client.port), received)
        }
    }

    /// An independent verifier, written as a receiving backend would (§9.1).
    static func verify(_ signedRequest: String, secret: String) -> JSONValue? {
        let parts = signedRequest.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let signature = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1])
        else { return nil }
        let key = SymmetricKey(data: Data(secret.utf8))
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(parts[1].utf8), using: key),
            let json = try? JSONValue.decode(payload), json["algorithm"] == "HMAC-SHA256"
        else { return nil }
        return json
    }

    @Test("deauthorize sends a correctly signed request the backend can verify")
    func deauthorize() async throws {
        try await Self.withReceiver(deletionReply: "{}") { port, received in
            try await withEmulator { emulator in
                let response = try await emulator.post(
                    "/_emulator/callbacks/deauthorize",
                    json: [
                        "app_id": .string(Demo.appID), "user": "alice",
                        "url": .string("http://127.0.0.1:\(port)/facebook/deauthorize"),
                    ])
                #expect(response.status == .ok)
                #expect(try response.json()["status"] == 200)
                let signed = try #require(await received.signedRequests.first)
                #expect(!signed.contains("="))
                let payload = try #require(Self.verify(signed, secret: Demo.secret))
                #expect(payload["user_id"] == .string(Demo.id("alice")))
                #expect(payload["issued_at"] == 1_800_000_000)
            }
        }
    }

    @Test("data deletion carries expires and checks the reply has url and confirmation_code")
    func dataDeletion() async throws {
        try await Self.withReceiver(
            deletionReply: #"{"url":"https://app.example/deletion?id=abc","confirmation_code":"abc"}"#
        ) { port, received in
            try await withEmulator { emulator in
                let body: JSONValue = [
                    "app_id": .string(Demo.appID), "user": "bob",
                    "url": .string("http://127.0.0.1:\(port)/facebook/deletion"),
                ]
                let response = try await emulator.post("/_emulator/callbacks/data-deletion", json: body).json()
                #expect(response["valid_response"] == true)
                let signed = try #require(await received.signedRequests.first)
                let payload = try #require(Self.verify(signed, secret: Demo.secret))
                #expect(payload["expires"] == 1_800_003_600)
            }
        }
        try await Self.withReceiver(deletionReply: #"{"ok":true}"#) { port, _ in
            try await withEmulator { emulator in
                let body: JSONValue = [
                    "app_id": .string(Demo.appID), "user": "bob",
                    "url": .string("http://127.0.0.1:\(port)/facebook/deletion"),
                ]
                let response = try await emulator.post("/_emulator/callbacks/data-deletion", json: body).json()
                #expect(response["valid_response"] == false)
            }
        }
    }

    @Test("tampered variants fail verification", arguments: SignedRequest.Tampering.allCases)
    func tampered(tampering: SignedRequest.Tampering) async throws {
        try await Self.withReceiver(deletionReply: "{}") { port, received in
            try await withEmulator { emulator in
                _ = try await emulator.post(
                    "/_emulator/callbacks/deauthorize",
                    json: [
                        "app_id": .string(Demo.appID), "user": "alice", "tamper": .string(tampering.rawValue),
                        "url": .string("http://127.0.0.1:\(port)/facebook/deauthorize"),
                    ])
                let signed = try #require(await received.signedRequests.first)
                #expect(Self.verify(signed, secret: Demo.secret) == nil)
                if tampering == .algorithm {
                    let payload = try #require(Base64URL.decode(signed.split(separator: ".")[1]))
                    #expect(try JSONValue.decode(payload)["algorithm"] == "HMAC-SHA1")
                }
            }
        }
    }

    @Test("the bk-rs test vector: Facebook's signature over the encoded payload")
    func knownVector() {
        let payload = "eyJ1c2VyX2lkIjoiMCIsImFsZ29yaXRobSI6IkhNQUMtU0hBMjU2IiwiaXNzdWVkX2F0IjoxNjI0MjQ0MTU2fQ"
        #expect(
            SignedRequest.signature(encodedPayload: payload, secret: "key")
                == "Mf_s6nTb38UYqioBmPqu0Ewm9souPZB9I2fIGwV729U")
    }

    @Test("an unreachable or invalid URL is a control error, not a crash")
    func badTargets() async throws {
        try await withEmulator { emulator in
            let invalid = try await emulator.post(
                "/_emulator/callbacks/deauthorize",
                json: ["app_id": .string(Demo.appID), "user": "alice", "url": "ftp://x"])
            #expect(try invalid.json()["error"]?["code"] == "invalid_field")
            let unreachable = try await emulator.post(
                "/_emulator/callbacks/deauthorize",
                json: [
                    "app_id": .string(Demo.appID), "user": "alice", "url": "http://127.0.0.1:1/x", "timeout_ms": 300,
                ])
            #expect(unreachable.status == .badGateway)
            #expect(try unreachable.json()["error"]?["code"] == "callback_failed")
        }
    }
}
