import ArgumentParser
import Foundation
import LatchkeyServer

/// Where the CLI's settings come from, lowest precedence first: a configuration file
/// (`--config`, or `LATCHKEY_CONFIG_FILE`), then the environment; commands lay their flags over
/// the result. Every setting may also be given as `NAME_FILE`, a file holding its value.
enum Settings {
    /// The SQLite database `serve`, `keys` and `db` use when no database is named.
    static let defaultDatabase = "latchkey-data/latchkey.sqlite"

    /// `LATCHKEY_…` names in the environment that are not server settings but belong to other
    /// commands (`latchkey emulator`, `latchkey login`, the example app) or to the project's own
    /// scripts and tests; a name here is never taken for a mistyped setting.
    static let otherVariables: Set<String> = [
        "LATCHKEY_CONFIG_FILE", "LATCHKEY_SERVER_URL", "LATCHKEY_URL", "LATCHKEY_EMULATOR_URL",
        "LATCHKEY_EMULATOR_HOST", "LATCHKEY_EMULATOR_PORT", "LATCHKEY_EMULATOR_SEED", "LATCHKEY_EMULATOR_PUBLIC_URL",
        "LATCHKEY_EMULATOR_ISSUER", "LATCHKEY_BENCHMARKS", "LATCHKEY_UPDATE_SCREENSHOTS", "LATCHKEY_SKIP_TEST_SETUP",
        "LATCHKEY_APPLE_STAND_INS",
    ]
    /// Prefixes of the project's own test and fuzzing variables (`LATCHKEY_TEST_POSTGRES_URL`…).
    static let otherPrefixes = ["LATCHKEY_TEST_", "LATCHKEY_FUZZ_"]

    static func load(
        configFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [String: String] {
        try checkNames(in: environment)
        var settings: [String: String] = [:]
        if let file = configFile ?? environment["LATCHKEY_CONFIG_FILE"] {
            settings = try ServerConfiguration.settings(fromFile: file)
        }
        var fromEnvironment: [String: String] = [:]
        for name in ServerConfiguration.settingNames + ServerConfiguration.fileSettingNames {
            if let value = environment[name] { fromEnvironment[name] = value }
        }
        // A setting in the environment replaces the file's, in either of its two forms; both forms
        // in the environment stay, for the configuration to refuse.
        for name in fromEnvironment.keys {
            let base = name.hasSuffix("_FILE") ? String(name.dropLast(5)) : name
            settings[base] = nil
            settings[base + "_FILE"] = nil
        }
        return settings.merging(fromEnvironment) { _, environment in environment }
    }

    /// Refuses a `LATCHKEY_…` variable that names no setting, as the configuration file does: a
    /// typo in a unit's `Environment=` (`LATCHKEY_TRUSTED_PROXY`) would otherwise leave a default
    /// in place without a word, such as one sign-in limit shared by everyone behind a proxy.
    /// - Throws: `CommandError` naming the variable and the closest setting (the command's flags
    ///   were fine: no usage text).
    static func checkNames(in environment: [String: String]) throws {
        let known = Set(ServerConfiguration.settingNames + ServerConfiguration.fileSettingNames)
        let unknown = environment.keys.filter { name in
            name.hasPrefix("LATCHKEY_") && !known.contains(name) && !otherVariables.contains(name)
                && !otherPrefixes.contains(where: { name.hasPrefix($0) })
        }.sorted()
        guard let name = unknown.first else { return }
        let hint = ServerConfiguration.nearestSettingName(to: name).map { "; did you mean \($0)?" } ?? ""
        let others = unknown.count > 1 ? " (and \(unknown.dropFirst().joined(separator: ", ")))" : ""
        throw CommandError(
            "the environment sets \(name)\(others), which is not a Latchkey setting\(hint) "
                + "(settings are listed in the README; remove or rename it)")
    }

    /// Sets `name` from a command-line flag, which wins over both of its forms from the file or
    /// the environment (a `NAME_FILE` left beside it would be refused as the setting given twice).
    static func set(_ name: String, to value: String?, in settings: inout [String: String]) {
        guard let value else { return }
        settings[name] = value
        settings[name + "_FILE"] = nil
    }

    /// Names the default SQLite database when neither `LATCHKEY_DATABASE_URL` nor
    /// `LATCHKEY_DATABASE_URL_FILE` is set (filling it in beside a `_FILE` made every start with
    /// the file form fail as "set … not both").
    static func defaultingDatabase(_ settings: inout [String: String]) {
        guard settings["LATCHKEY_DATABASE_URL"] == nil, settings["LATCHKEY_DATABASE_URL_FILE"] == nil else { return }
        settings["LATCHKEY_DATABASE_URL"] = defaultDatabase
    }

    /// The configuration the settings describe, parsed but not validated (commands other than
    /// `serve` need only some of it).
    static func configuration(_ settings: [String: String]) throws -> ServerConfiguration {
        do {
            return try ServerConfiguration(settings: settings)
        } catch {
            // A setting's mistake, not the command line's: no usage text after it.
            throw CommandError("\(error)")
        }
    }
}

/// A command that could not do its work: printed as `Error: …` without the usage text that
/// ArgumentParser adds to `ValidationError`s (the flags were fine; the world was not).
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
