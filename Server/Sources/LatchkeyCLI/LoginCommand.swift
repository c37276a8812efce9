import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyCore

/// `latchkey login`: Easy Login for a person at a desktop. Listens on a loopback port, opens (or
/// prints) the sign-in URL, receives the redirect, saves the session and prints the user.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in with Facebook through the browser (Easy Login) and save the session.",
        discussion: """
            The server must register the client with a loopback redirect URI, e.g. \
            LATCHKEY_OAUTH_CLIENTS=latchkey-cli=http://127.0.0.1/callback (serve --dev does).
            """
    )

    @Option(help: "The Latchkey server (LATCHKEY_SERVER_URL).")
    var server: String?

    @Option(help: "The OAuth client id registered on the server.")
    var clientID: String = "latchkey-cli"

    @Option(help: "Facebook permissions beyond public_profile, comma-separated.")
    var permissions: String = "email"

    @Option(help: "Facebook field to user property, e.g. email=email,first_name=firstName.")
    var fieldsMapping: String?

    @Option(help: "Where to save the session (default: ~/.config/latchkey/credentials.json).")
    var credentials: String?

    @Flag(help: "Only print the URL; do not try to open a browser.")
    var noBrowser = false

    @Option(help: "Seconds to wait for the browser.")
    var timeout: Int = 300

    mutating func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let serverText = server ?? environment["LATCHKEY_SERVER_URL"] ?? "http://127.0.0.1:8080"
        guard let serverURL = URL(string: serverText), serverURL.scheme != nil, serverURL.host != nil else {
            throw ValidationError("--server must be an absolute URL, not '\(serverText)'")
        }
        var mapping: [String: String]?
        if let fieldsMapping {
            mapping = [:]
            for pair in fieldsMapping.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw ValidationError("--fields-mapping looks like field=property,…") }
                mapping?[parts[0]] = parts[1]
            }
        }
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be 1–3600 seconds") }
        let path = credentials ?? Self.defaultCredentialsPath(environment)
        let openBrowser = !noBrowser
        let user = try await LoopbackLogin.run(
            server: serverURL, clientID: clientID,
            permissions: permissions.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
            fieldsMapping: mapping, store: FileCredentialStore(url: URL(fileURLWithPath: path)),
            timeout: .seconds(timeout),
            openBrowser: { url in if openBrowser { Self.open(url) } },
            say: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        let body = UserBody(
            id: user.id, properties: user.properties, identities: user.identities,
            createdAt: Int(user.createdAt.timeIntervalSince1970))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(body), as: UTF8.self))
        FileHandle.standardError.write(Data("Signed in; session saved to \(path)\n".utf8))
    }

    static func defaultCredentialsPath(_ environment: [String: String]) -> String {
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/latchkey/credentials.json"
    }

    /// Best effort: the desktop's browser, only where there is a desktop (a terminal-only Linux
    /// box would otherwise start a text browser over this very terminal).
    static func open(_ url: URL) {
        #if os(macOS)
        let command = ["open", url.absoluteString]
        #else
        let environment = ProcessInfo.processInfo.environment
        guard environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil else { return }
        let command = ["xdg-open", url.absoluteString]
        #endif
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
