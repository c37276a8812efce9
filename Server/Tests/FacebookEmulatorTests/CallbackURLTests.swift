import Foundation
import LatchkeyAPI
import Testing

@testable import FacebookEmulator

/// The apps' deauthorize and data-deletion callback URLs, as their dashboard holds them.
@Suite("Callback URLs in the app dashboard")
struct CallbackURLTests {
    static let path = "/_emulator/apps/\(Demo.appID)/callbacks"

    /// The demo app in `GET /_emulator`.
    static func overviewApp(_ emulator: EmulatorClient) async throws -> JSONValue {
        let apps = try #require(try await emulator.get("/_emulator").json()["apps"]?.arrayValue)
        return try #require(apps.first { $0["id"] == .string(Demo.appID) })
    }

    @Test("set either or both, an empty string or null removes one; the overview shows them")
    func setAndClear() async throws {
        try await withEmulator { emulator in
            var app = try await Self.overviewApp(emulator)
            #expect(app["deauthorize_callback_url"] == .null && app["data_deletion_callback_url"] == .null)

            let both = try await emulator.post(
                Self.path,
                json: [
                    "deauthorize_callback_url": "https://app.example/fb/deauthorize",
                    "data_deletion_callback_url": "http://127.0.0.1:8080/fb/deletion",
                ])
            #expect(both.status == .ok)
            #expect(
                try both.json() == [
                    "id": .string(Demo.appID), "deauthorize_callback_url": "https://app.example/fb/deauthorize",
                    "data_deletion_callback_url": "http://127.0.0.1:8080/fb/deletion",
                ])
            app = try await Self.overviewApp(emulator)
            #expect(app["deauthorize_callback_url"] == "https://app.example/fb/deauthorize")

            // One field changes one URL; the other stays.
            let one = try await emulator.post(Self.path, json: ["deauthorize_callback_url": ""]).json()
            #expect(one["deauthorize_callback_url"] == .null)
            #expect(one["data_deletion_callback_url"] == "http://127.0.0.1:8080/fb/deletion")
            let cleared = try await emulator.post(Self.path, json: ["data_deletion_callback_url": .null]).json()
            #expect(cleared["data_deletion_callback_url"] == .null)
            // Form parameters work too, as everywhere in the control API.
            let form = try await emulator.post(
                Self.path, form: [("deauthorize_callback_url", "https://app.example/d")]
            ).json()
            #expect(form["deauthorize_callback_url"] == "https://app.example/d")
            // The other app is untouched.
            let apps = try #require(try await emulator.get("/_emulator").json()["apps"]?.arrayValue)
            #expect(apps.first { $0["id"] == .string(Demo.proofAppID) }?["deauthorize_callback_url"] == .null)
        }
    }

    @Test(
        "only absolute http(s) URLs are accepted",
        arguments: ["ftp://app.example/x", "/relative", "app.example/x", "https://", "mailto:someone@app.example"])
    func invalidURL(url: String) async throws {
        try await withEmulator { emulator in
            let response = try await emulator.post(Self.path, json: ["data_deletion_callback_url": .string(url)])
            #expect(response.status == .badRequest)
            #expect(try response.json()["error"]?["code"] == "invalid_field")
            #expect(try await Self.overviewApp(emulator)["data_deletion_callback_url"] == .null)
        }
    }

    @Test("an unknown app, no field, or a field that is not a string is refused")
    func refusals() async throws {
        try await withEmulator { emulator in
            let unknown = try await emulator.post(
                "/_emulator/apps/999/callbacks", json: ["deauthorize_callback_url": "https://app.example/d"])
            #expect(unknown.status == .notFound)
            #expect(try unknown.json()["error"]?["code"] == "unknown_app")
            let nothing = try await emulator.post(Self.path, json: ["redirect_uri": "https://app.example/d"])
            #expect(nothing.status == .badRequest)
            #expect(try nothing.json()["error"]?["code"] == "missing_field")
            let number = try await emulator.post(Self.path, json: ["deauthorize_callback_url": 42])
            #expect(number.status == .badRequest)
            #expect(try number.json()["error"]?["code"] == "invalid_field")
        }
    }

    @Test("seed apps carry both URLs; a seed with a bad one is refused before the emulator starts")
    func seed() throws {
        let json = #"""
            {"apps": [{"id": "1", "secret": "s", "deauthorize_callback_url": "https://app.example/d",
                       "data_deletion_callback_url": "https://app.example/x"}]}
            """#
        let seed = try JSONDecoder().decode(EmulatorSeed.self, from: Data(json.utf8))
        #expect(seed.apps[0].deauthorizeCallbackURL == "https://app.example/d")
        #expect(seed.apps[0].dataDeletionCallbackURL == "https://app.example/x")
        try seed.validate()
        // The seed format round-trips, URLs included.
        #expect(try JSONDecoder().decode(EmulatorSeed.self, from: JSONEncoder().encode(seed)) == seed)

        var bad = seed
        bad.apps[0].dataDeletionCallbackURL = "app.example/x"
        let error = #expect(throws: EmulatorConfigurationError.self) { try bad.validate() }
        #expect(error?.description.contains("data_deletion_callback_url") == true)
    }
}
