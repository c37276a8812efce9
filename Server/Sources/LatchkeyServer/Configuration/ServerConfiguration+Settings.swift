import Foundation
import HTTPTypes
import LatchkeyCrypto
import NIOCore

extension ServerConfiguration {
    /// Every setting's name (`settings`), for rejecting typos in configuration files and the
    /// environment.
    package static let settingNames: [String] = settings.map(\.name)

    /// Every setting may instead be read from a file, `NAME_FILE` (as container secrets are
    /// mounted): app secrets, the key-encryption key and database passwords then never sit in the
    /// environment, a command line or a configuration file.
    package static let fileSettingNames: [String] = settingNames.map { $0 + "_FILE" }

    /// `settings` with each `NAME_FILE` replaced by `NAME` and the file's contents (surrounding
    /// white space and newlines trimmed).
    /// - Throws: `ConfigurationError` when a file cannot be read, a setting is given both ways, or
    ///   two settings name one inherited descriptor (which holds one secret).
    static func resolvingFiles(_ settings: [String: String]) throws -> [String: String] {
        var resolved = settings
        var readDescriptors: [Int32: String] = [:]
        for name in settingNames {
            guard let path = settings[name + "_FILE"]?.trimmingCharacters(in: .whitespaces), !path.isEmpty else {
                continue
            }
            guard (settings[name] ?? "").trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ConfigurationError("set \(name) or \(name)_FILE, not both")
            }
            if let descriptor = SettingFile.inheritedDescriptor(path) {
                // A pipe is read once: the second setting would silently get an empty value.
                if let first = readDescriptors[descriptor] {
                    throw ConfigurationError(
                        "\(first)_FILE and \(name)_FILE both read '\(path)', which carries one secret: give one of "
                            + "them a file of its own (docs/deployment.md, section 8, runs commands needing two)")
                }
                readDescriptors[descriptor] = name
            }
            let contents = try SettingFile.read(path, name: name)
            resolved[name] = contents.trimmingCharacters(in: .whitespacesAndNewlines)
            resolved[name + "_FILE"] = nil
        }
        return resolved
    }

    /// Builds a configuration from `LATCHKEY_…` settings through the one table (`settings`);
    /// absent settings keep their defaults.
    /// - Throws: `ConfigurationError` naming a setting whose value cannot be parsed.
    package init(settings given: [String: String]) throws {
        self.init()
        let settings = try Self.resolvingFiles(given)
        settingsFromFiles = Set(Self.settingNames.filter { given[$0 + "_FILE"] != nil })
        let reader = SettingReader(settings: settings, fromFiles: settingsFromFiles)
        for setting in Self.settings { try setting.read(setting.name, reader, &self) }
    }

    /// `raw` quoted for an error message, or, when `name` came from a `_FILE` (which may be a
    /// secret's file named by mistake), only where it came from.
    func shown(_ name: String, _ raw: String) -> String {
        Self.shown(name, raw, fromFiles: settingsFromFiles)
    }

    /// `shown`'s rule, for readers that have only the names given as files (`SettingReader`).
    static func shown(_ name: String, _ raw: String, fromFiles: Set<String>) -> String {
        fromFiles.contains(name) ? "the contents of \(name)_FILE" : "'\(raw)'"
    }

    /// The setting whose name is closest to `name` when `name` looks like its typo (edit distance,
    /// or a missing `LATCHKEY_` prefix), for "did you mean" hints wherever settings are read.
    package static func nearestSettingName(to name: String) -> String? {
        SettingsFile.nearest(to: name, in: Set(settingNames + fileSettingNames))
    }

    /// Reads a configuration file (`SettingsFile`: dotenv forms), refusing unknown names so a
    /// typo cannot silently leave a default in place.
    package static func settings(fromFile path: String) throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationError("configuration file \(path) does not exist")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("configuration file \(path) cannot be read (check its permissions)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("configuration file \(path) is not UTF-8 text")
        }
        return try SettingsFile.parse(text, path: path, known: Set(settingNames + fileSettingNames))
    }
}
