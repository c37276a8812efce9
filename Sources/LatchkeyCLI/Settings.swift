import ArgumentParser
import Foundation
import LatchkeyServer

/// Where the CLI's settings come from, lowest precedence first: a configuration file
/// (`--config`, or `LATCHKEY_CONFIG_FILE`), then the environment; commands lay their flags over
/// the result. Every setting may also be given as `NAME_FILE`, a file holding its value.
enum Settings {
    static func load(configFile: String?) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
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

    /// The configuration the settings describe, parsed but not validated (commands other than
    /// `serve` need only some of it).
    static func configuration(_ settings: [String: String]) throws -> ServerConfiguration {
        do {
            return try ServerConfiguration(settings: settings)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

/// A command that could not do its work: printed as `Error: …` without the usage text that
/// ArgumentParser adds to `ValidationError`s (the flags were fine; the world was not).
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
