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
    /// - Throws: `ConfigurationError` when a file cannot be read, or a setting is given both ways.
    static func resolvingFiles(_ settings: [String: String]) throws -> [String: String] {
        var resolved = settings
        for name in settingNames {
            guard let path = settings[name + "_FILE"]?.trimmingCharacters(in: .whitespaces), !path.isEmpty else {
                continue
            }
            guard (settings[name] ?? "").trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ConfigurationError("set \(name) or \(name)_FILE, not both")
            }
            let contents = try readSettingFile(path, name: name)
            resolved[name] = contents.trimmingCharacters(in: .whitespacesAndNewlines)
            resolved[name + "_FILE"] = nil
        }
        return resolved
    }

    /// The contents of a `NAME_FILE`: a regular file, or a pipe such as `/dev/stdin` (an operator
    /// hands a command the key-encryption key that way, from a file only root reads, without it
    /// touching a command line or the environment). At most 1 MiB.
    /// - Throws: `ConfigurationError` naming the setting and the path, never the contents.
    static func readSettingFile(_ path: String, name: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "no permission to read it" : "no such file"
            throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(reason)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: 1 << 20) ?? Data()
        } catch {
            throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(name)_FILE '\(path)' is not UTF-8 text")
        }
        return text
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
