import Foundation

/// The SDK's words for people (button titles, accessibility labels, error messages), kept in
/// LatchkeyCore's String Catalog (`Localizable.xcstrings`: English, French, German and Spanish)
/// and shown in the person's language.
///
/// An app changes any of them, or adds a language, with a strings table named `Latchkey` in its
/// own bundle (a `Latchkey.xcstrings` String Catalog) holding the same keys: that table is read
/// first. On Apple platforms a package's bundle is shown only in languages the app itself
/// declares (its localizations), as for any package.
public enum LatchkeyString: String, CaseIterable, Sendable {
    /// The login button's title when nobody is signed in: "Log in with Facebook".
    case signIn = "button.sign_in"
    /// The login button's title when someone is signed in: "Log out".
    case signOut = "button.sign_out"
    /// What VoiceOver announces while a sign-in is under way: "Signing in…".
    case signingIn = "button.signing_in"
    /// What VoiceOver announces while a sign-out is under way: "Signing out…".
    case signingOut = "button.signing_out"
    /// The profile picture's accessibility label when the user has no name: "Profile picture".
    case profilePicture = "picture.label"
    /// The server ended the session.
    case sessionEnded = "error.session_ended"
    /// Facebook refused the token: the person changed their password.
    case facebookPasswordChanged = "error.facebook_password_changed"
    /// The person removed the app from their Facebook account.
    case facebookAppRemoved = "error.facebook_app_removed"
    /// Facebook asks the person to log in at facebook.com first.
    case facebookCheckpoint = "error.facebook_checkpoint"
    /// The server could not be reached.
    case networkUnavailable = "error.network_unavailable"
    /// A temporary failure: try again in a moment.
    case tryAgain = "error.try_again"
    /// The server refused the action.
    case notAllowed = "error.not_allowed"
    /// The code prompt's label when a sign-in waits for the second factor: "Enter the code from
    /// your authenticator app".
    case secondFactorPrompt = "button.second_factor_prompt"
    /// The button that sends the code: "Verify".
    case secondFactorVerify = "button.second_factor_verify"
    /// A second factor's code was wrong or already used.
    case secondFactorCodeInvalid = "error.second_factor_code_invalid"

    /// The string in the person's language: the app's `Latchkey` table first, then the SDK's
    /// catalog, then English. On Apple platforms the language is the one the app itself runs in
    /// (`Bundle.main.preferredLocalizations`), so an app localized only in English shows the SDK in
    /// English too; elsewhere it is `Locale.preferredLanguages`.
    public var localized: String { localized(languages: Self.preferredLanguages) }

    /// The languages `localized` looks in, most preferred first.
    static var preferredLanguages: [String] {
        #if canImport(Darwin)
        Bundle.main.preferredLocalizations + Locale.preferredLanguages
        #else
        Locale.preferredLanguages
        #endif
    }

    /// The string for the first of `languages` (BCP 47 codes such as `fr-CA`, most preferred
    /// first) that the app's `Latchkey` table or the SDK's catalog has, else English.
    public func localized(languages: [String], appBundle: Bundle = .main) -> String {
        let tags = languages.flatMap(Self.fallbacks)
        // The app's table per language, then its Base localization (a table not translated).
        if let overridden = Self.lookUp(rawValue, table: "Latchkey", in: appBundle, tags: tags + ["Base"]) {
            return overridden
        }
        #if canImport(Darwin)
        // Xcode compiles the catalog into the bundle's .lproj tables.
        if let bundled = Self.lookUp(rawValue, table: nil, in: .module, tags: tags + ["en"]) { return bundled }
        #endif
        return StringCatalog.bundled?.value(rawValue, tags: tags) ?? rawValue
    }

    /// A language tag, then each shorter form of it: `zh-Hant-TW`, `zh-Hant`, `zh`.
    static func fallbacks(_ language: String) -> [String] {
        var subtags = language.replacingOccurrences(of: "_", with: "-").split(separator: "-").map(String.init)
        var tags: [String] = []
        while !subtags.isEmpty {
            tags.append(subtags.joined(separator: "-"))
            subtags.removeLast()
        }
        return tags
    }

    /// `key` in `table` of the first `tags` localization `bundle` has (its `.lproj` folder).
    private static func lookUp(_ key: String, table: String?, in bundle: Bundle, tags: [String]) -> String? {
        // A value no table holds, so that a missing key is told apart from any real value.
        let missing = "\u{1}latchkey-missing"
        for tag in tags {
            guard let path = bundle.path(forResource: tag, ofType: "lproj"), let localized = Bundle(path: path)
            else { continue }
            let value = localized.localizedString(forKey: key, value: missing, table: table)
            if value != missing { return value }
        }
        return nil
    }
}

/// A String Catalog read as it is: what SwiftPM copies into the bundle where there is no Xcode to
/// compile it (Linux, Android, Windows).
struct StringCatalog: Decodable, Sendable {
    let sourceLanguage: String
    let strings: [String: Entry]

    struct Entry: Decodable, Sendable {
        let localizations: [String: Localization]?
    }

    struct Localization: Decodable, Sendable {
        let stringUnit: Unit?
    }

    struct Unit: Decodable, Sendable {
        let state: String
        let value: String
    }

    /// The SDK's catalog, when the bundle holds it as a file (not on Apple platforms).
    static let bundled: StringCatalog? = {
        guard let url = Bundle.module.url(forResource: "Localizable", withExtension: "xcstrings"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return try? JSONDecoder().decode(StringCatalog.self, from: data)
    }()

    /// The value of `key` in the first of `tags` the catalog has, else in its source language.
    func value(_ key: String, tags: [String]) -> String? {
        guard let localizations = strings[key]?.localizations else { return nil }
        for tag in tags + [sourceLanguage] {
            if let value = localizations[tag]?.stringUnit?.value { return value }
        }
        return nil
    }
}
