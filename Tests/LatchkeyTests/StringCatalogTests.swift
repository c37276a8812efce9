import Foundation
import Testing

@testable import LatchkeyCore

/// The SDK's words for people: every one in the String Catalog in four languages, looked up in the
/// person's language, and overridable by the app's own `Latchkey` table.
@Suite("String Catalog")
struct StringCatalogTests {
    /// The catalog as a file, read as JSON independently of the SDK's reader.
    static func catalog() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/LatchkeyCore/Localizable.xcstrings").standardizedFileURL
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        return try #require(object as? [String: Any])
    }

    @Test("every string is in the catalog, translated into English, French, German and Spanish, and nothing else is")
    func complete() throws {
        let catalog = try Self.catalog()
        #expect(catalog["sourceLanguage"] as? String == "en")
        let strings = try #require(catalog["strings"] as? [String: [String: Any]])
        #expect(Set(strings.keys) == Set(LatchkeyString.allCases.map(\.rawValue)))
        for (key, entry) in strings {
            let localizations = try #require(entry["localizations"] as? [String: [String: [String: String]]], "\(key)")
            #expect(Set(localizations.keys).isSuperset(of: ["en", "fr", "de", "es"]), "\(key)")
            for (language, localization) in localizations {
                #expect(localization["stringUnit"]?["state"] == "translated", "\(key) \(language)")
                #expect(localization["stringUnit"]?["value"]?.isEmpty == false, "\(key) \(language)")
            }
            #expect((entry["comment"] as? String)?.isEmpty == false, "\(key): translators need a comment")
        }
    }

    @Test("looked up in the person's language, by its most specific tag the catalog has, else English")
    func lookup() {
        let empty = Bundle(path: FileManager.default.temporaryDirectory.path) ?? .main
        #expect(LatchkeyString.signIn.localized(languages: ["en"], appBundle: empty) == "Log in with Facebook")
        #expect(LatchkeyString.signingIn.localized(languages: ["fr-CA"], appBundle: empty) == "Connexion…")
        #expect(LatchkeyString.signOut.localized(languages: ["de_AT"], appBundle: empty) == "Abmelden")
        #expect(LatchkeyString.signOut.localized(languages: ["pt-BR", "es"], appBundle: empty) == "Cerrar sesión")
        #expect(LatchkeyString.signingIn.localized(languages: ["ja"], appBundle: empty) == "Signing in…")
    }

    @Test("an app's own Latchkey table changes the wording, in the languages it has")
    func overridden() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lk-strings-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for (language, text) in [("en", "Continue with Facebook"), ("fr", "Continuer avec Facebook")] {
            let table = root.appendingPathComponent("\(language).lproj")
            try FileManager.default.createDirectory(at: table, withIntermediateDirectories: true)
            try Data(#""button.sign_in" = "\#(text)";"#.utf8).write(
                to: table.appendingPathComponent("Latchkey.strings"))
        }
        let app = try #require(Bundle(url: root))
        #expect(LatchkeyString.signIn.localized(languages: ["en"], appBundle: app) == "Continue with Facebook")
        #expect(LatchkeyString.signIn.localized(languages: ["fr-CA"], appBundle: app) == "Continuer avec Facebook")
        // A language the app's table lacks keeps the SDK's translation, not the app's English.
        #expect(LatchkeyString.signIn.localized(languages: ["de"], appBundle: app) == "Mit Facebook anmelden")
        // A key the app's table lacks keeps the SDK's wording.
        #expect(LatchkeyString.signOut.localized(languages: ["fr"], appBundle: app) == "Se déconnecter")

    }

    @Test("an app's Latchkey table in Base (not translated) applies to every language")
    func overriddenInBase() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lk-strings-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let base = root.appendingPathComponent("Base.lproj")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        try Data(#""button.sign_out" = "Sign out";"#.utf8).write(to: base.appendingPathComponent("Latchkey.strings"))
        let app = try #require(Bundle(url: root))
        #expect(LatchkeyString.signOut.localized(languages: ["de"], appBundle: app) == "Sign out")
        #expect(LatchkeyString.signIn.localized(languages: ["de"], appBundle: app) == "Mit Facebook anmelden")
    }

    @Test("a language tag falls back through its shorter forms")
    func fallbacks() {
        #expect(LatchkeyString.fallbacks("zh-Hant-TW") == ["zh-Hant-TW", "zh-Hant", "zh"])
        #expect(LatchkeyString.fallbacks("de_AT") == ["de-AT", "de"])
    }

    @Test("error messages for people come from the catalog")
    func errorMessages() {
        let error = LatchkeyError(code: .networkUnavailable, message: "offline")
        #expect(error.userMessage == LatchkeyString.networkUnavailable.localized)
        // A message, not a key the lookup failed to find.
        for string in LatchkeyString.allCases {
            #expect(string.localized != string.rawValue, "\(string)")
        }
    }
}
