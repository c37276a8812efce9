import Foundation
import Testing

@testable import LatchkeyServer

@Suite("Server configuration")
struct ConfigurationTests {
    @Test("LATCHKEY_ settings fill the configuration")
    func settings() throws {
        let configuration = try ServerConfiguration(settings: [
            "LATCHKEY_HOST": "0.0.0.0", "LATCHKEY_PORT": "9000", "LATCHKEY_FACEBOOK_APP_ID": "1, 2",
            "LATCHKEY_PUBLIC_URL": "https://auth.example.com",
            "LATCHKEY_FACEBOOK_APP_SECRET": "s1,s2",
            "LATCHKEY_FACEBOOK_ISSUERS": "https://www.facebook.com,https://facebook.com",
            "LATCHKEY_ACCESS_TOKEN_TTL": "300", "LATCHKEY_ALLOW_MISSING_NONCE": "yes",
            "LATCHKEY_DEFAULT_FIELDS_MAPPING": "email=mail,name=fullName", "LATCHKEY_CLIENT_MAPPABLE_PROPERTIES": "*",
            "LATCHKEY_DATABASE_URL": "sqlite:/tmp/x.sqlite", "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true",
        ])
        #expect(configuration.http.host == "0.0.0.0" && configuration.http.port == 9000)
        #expect(configuration.facebook.apps == [.init(id: "1", secret: "s1"), .init(id: "2", secret: "s2")])
        #expect(configuration.facebook.issuers.count == 2)
        #expect(configuration.sessions.accessTokenLifetime == 300 && configuration.signIn.allowMissingNonce)
        #expect(configuration.users.defaultFieldsMapping == ["email": "mail", "name": "fullName"])
        #expect(configuration.users.clientMappableProperties == nil)
        let defaults = try ServerConfiguration(settings: ["LATCHKEY_DEFAULT_FIELDS_MAPPING": "email=mail"])
        #expect(defaults.users.clientMappableProperties == ["mail"])
        try configuration.validate()
        #expect(try DatabaseLocation(configuration.database.url) == .sqliteFile("/tmp/x.sqlite"))
    }

    @Test(
        "unparsable and invalid settings name the setting",
        arguments: [
            (["LATCHKEY_PORT": "eighty"], "LATCHKEY_PORT"),
            (
                ["LATCHKEY_FACEBOOK_APP_ID": "1,2", "LATCHKEY_FACEBOOK_APP_SECRET": "a,b,c"],
                "LATCHKEY_FACEBOOK_APP_SECRET"
            ),
            (["LATCHKEY_ALLOW_MISSING_NONCE": "maybe"], "LATCHKEY_ALLOW_MISSING_NONCE"),
            (["LATCHKEY_ACCESS_TOKEN_TTL": "soon"], "LATCHKEY_ACCESS_TOKEN_TTL"),
            (["LATCHKEY_DEFAULT_FIELDS_MAPPING": "email"], "LATCHKEY_DEFAULT_FIELDS_MAPPING"),
        ])
    func parseErrors(settings: [String: String], name: String) {
        #expect {
            _ = try ServerConfiguration(settings: settings)
        } throws: { "\($0)".contains(name) }
    }

    @Test(
        "validate refuses what cannot work",
        arguments: [
            ([:], "LATCHKEY_FACEBOOK_APP_ID"),
            (["LATCHKEY_FACEBOOK_APP_ID": "abc", "LATCHKEY_FACEBOOK_APP_SECRET": "s"], "numeric"),
            (
                [
                    "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
                    "LATCHKEY_FACEBOOK_GRAPH_URL": "graph",
                ], "LATCHKEY_FACEBOOK_GRAPH_URL"
            ),
            (
                [
                    "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
                    "LATCHKEY_DATABASE_URL": "postgres://app@db.example/latchkey?sslmode=prefer",
                ], "sslmode must be"
            ),
            (
                [
                    "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
                    "LATCHKEY_DEFAULT_FIELDS_MAPPING": "email=id",
                ], "reserved"
            ),
            (
                ["LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s", "LATCHKEY_CLOCK_SKEW": "3600"],
                "LATCHKEY_CLOCK_SKEW"
            ),
            (
                ["LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s", "LATCHKEY_HOST": "0.0.0.0"],
                "LATCHKEY_PUBLIC_URL"
            ),
            (
                [
                    "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
                    "LATCHKEY_ADMIN_LISTEN": "9090",
                ],
                "LATCHKEY_ADMIN_LISTEN"
            ),
            (
                [
                    "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
                    "LATCHKEY_ADMIN_LISTEN": "[::1:99999",
                ], "LATCHKEY_ADMIN_LISTEN"
            ),
        ])
    func validation(settings: [String: String], fragment: String) throws {
        let configuration = try ServerConfiguration(settings: settings)
        #expect {
            try configuration.validate()
        } throws: { "\($0)".contains(fragment) }
    }

    @Test("LATCHKEY_ADMIN_LISTEN reads as a host and a port, IPv6 in brackets")
    func adminListen() throws {
        var operations = ServerConfiguration.OperationsSettings()
        for (given, host, port) in [
            ("127.0.0.1:9090", "127.0.0.1", 9090), ("[::1]:9091", "::1", 9091), ("localhost:0", "localhost", 0),
        ] {
            operations.adminListen = given
            #expect(operations.adminAddress?.host == host && operations.adminAddress?.port == port, "\(given)")
        }
        for given in [":9090", "host", "host:port", "[::1]", "a b:1", "h:70000"] {
            operations.adminListen = given
            #expect(operations.adminAddress == nil, "\(given)")
        }
    }

    @Test("a settings file is read, with comments, and refuses unknown names")
    func file() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(UUID().uuidString).env")
        try "# comment\nLATCHKEY_PORT=9100\n\nLATCHKEY_FACEBOOK_APP_ID = 42\n".write(
            to: url, atomically: true, encoding: .utf8)
        #expect(
            try ServerConfiguration.settings(fromFile: url.path) == [
                "LATCHKEY_PORT": "9100", "LATCHKEY_FACEBOOK_APP_ID": "42",
            ])
        try "LATCHKEY_PROT=9100\n".write(to: url, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.settings(fromFile: url.path) }
        try? FileManager.default.removeItem(at: url)
    }

    @Test("dotenv forms: export, quotes, escapes, comments, CRLF")
    func dotenvForms() throws {
        let text = [
            "export LATCHKEY_PORT=9100", "LATCHKEY_HOST=\"0.0.0.0\"  # all interfaces",
            "LATCHKEY_PUBLIC_URL='https://auth.example.com/#not-a-comment'",
            "LATCHKEY_FACEBOOK_APP_SECRET=\"a\\\"b\"", "LATCHKEY_FACEBOOK_APP_ID=42 # the app",
            "  # indented comment", "",
        ].joined(separator: "\r\n")
        #expect(
            try SettingsFile.parse(text, path: "x.env", known: Set(ServerConfiguration.settingNames)) == [
                "LATCHKEY_PORT": "9100", "LATCHKEY_HOST": "0.0.0.0",
                "LATCHKEY_PUBLIC_URL": "https://auth.example.com/#not-a-comment",
                "LATCHKEY_FACEBOOK_APP_SECRET": "a\"b", "LATCHKEY_FACEBOOK_APP_ID": "42",
            ])
    }

    @Test(
        "each mistake names the file, the line and the setting",
        arguments: [
            (
                "LATCHKEY_PORT=1\nLATCHKEY_PROT=9100",
                "x.env:2: unknown setting 'LATCHKEY_PROT'; did you mean LATCHKEY_PORT?"
            ),
            ("LATCHKEY_PORT 9100", "x.env:1: expected NAME=value"),
            ("LATCHKEY_HOST=\"0.0.0.0", "x.env:1: the value of LATCHKEY_HOST has no closing \""),
            ("LATCHKEY_HOST=\"a\" b", "x.env:1: unexpected text after the quoted value of LATCHKEY_HOST"),
            ("LATCHKEY_PORT=1\n\nLATCHKEY_PORT=2", "x.env:3: LATCHKEY_PORT is already set on line 1"),
            ("DATABASE_URL=x", "x.env:1: unknown setting 'DATABASE_URL'; did you mean LATCHKEY_DATABASE_URL?"),
        ])
    func dotenvMistakes(text: String, message: String) {
        #expect {
            try SettingsFile.parse(text, path: "x.env", known: Set(ServerConfiguration.settingNames))
        } throws: { "\($0)" == message }
    }

    @Test("a missing configuration file is named as missing")
    func missingFile() {
        #expect {
            try ServerConfiguration.settings(fromFile: "/nonexistent/latchkey.env")
        } throws: { "\($0)" == "configuration file /nonexistent/latchkey.env does not exist" }
    }
}

@Suite("Setting names")
struct SettingNameTests {
    static let root = Repository.root

    static func names(in path: String, _ pattern: Regex<(Substring, Substring)>) throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        return Set(text.matches(of: pattern).map { String($0.output.1) }.filter { !$0.hasSuffix("_FILE") })
    }

    @Test("every setting is declared once, with a default and a meaning; the README mentions no other")
    func known() throws {
        let settings = ServerConfiguration.settings
        #expect(settings.count > 50)
        #expect(Set(settings.map(\.name)).count == settings.count, "a setting declared twice")
        for setting in settings {
            #expect(!setting.defaultValue.isEmpty && !setting.meaning.isEmpty, "\(setting.name) undocumented")
            #expect(
                !setting.meaning.contains("|") && !setting.meaning.contains("\n"), "\(setting.name): one table cell")
        }
        let known = Set(ServerConfiguration.settingNames)
        let documented = try Self.names(in: "README.md", /`(LATCHKEY_[A-Z0-9_]+)`/)
            .subtracting(["LATCHKEY_CONFIG_FILE", "LATCHKEY_UPDATE_SCREENSHOTS", "LATCHKEY_BENCHMARKS", "LATCHKEY_URL"])
            .filter { !$0.hasPrefix("LATCHKEY_EMULATOR_") }  // the emulator's own settings
        #expect(
            documented.subtracting(known).isEmpty, "documented but unknown: \(documented.subtracting(known).sorted())")
    }

    @Test("the README's settings tables are the table the server parses with (latchkey settings --markdown)")
    func readmeTable() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- settings-table:"))
        let end = try #require(readme.range(of: "<!-- settings-table end -->"))
        let between = readme[start.upperBound..<end.lowerBound]
        let body = try #require(between.range(of: "-->")).upperBound
        let shown = between[body...].trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            shown == Setting.markdown(ServerConfiguration.settings),
            "README.md's settings differ from the table: replace them with `latchkey settings --markdown`")
    }
}
