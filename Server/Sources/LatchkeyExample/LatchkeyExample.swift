import Foundation
import Latchkey
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs in against `latchkey serve --dev` with the SDK: gets a Facebook token from the emulator
/// (standing in for the Facebook SDK on a device), exchanges it, refreshes, and signs out.
///
/// Run: `swift run --package-path Server latchkey serve --dev` in one terminal,
/// `swift run --package-path Server latchkey-example [user]` in another.
@main
struct LatchkeyExample {
    static let usage = """
        Usage: latchkey-example [USER]

        Signs USER (default alice; the dev emulator also has bob, carol and dave) in to a Latchkey
        server with the SDK, refreshes the session and signs out.

        Environment:
          LATCHKEY_URL           the server (default http://127.0.0.1:8080, as `latchkey serve --dev`)
          LATCHKEY_EMULATOR_URL  the Facebook emulator (default http://127.0.0.1:8090)
        """

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains(where: { $0.hasPrefix("-") }) || arguments.count > 1 {
            // `--help` is not a person; any other option is a mistake worth the same answer.
            let asked = arguments == ["--help"] || arguments == ["-h"]
            print(usage)
            exit(asked ? 0 : 2)
        }
        let server = URL(string: ProcessInfo.processInfo.environment["LATCHKEY_URL"] ?? "http://127.0.0.1:8080")!
        let emulator = ProcessInfo.processInfo.environment["LATCHKEY_EMULATOR_URL"] ?? "http://127.0.0.1:8090"
        let user = arguments.first ?? "alice"
        let appID = "100000000000001"
        do {
            let token = try await facebookToken(emulator: emulator, appID: appID, user: user)
            let store = FileCredentialStore(
                url: FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-example-session.json"))
            let client = LatchkeyClient(
                configuration: LatchkeyConfiguration(serverURL: server, facebookAppID: appID, credentialStore: store))
            let result = try await client.signIn(with: .accessToken(token))
            print("Signed in \(result.user.string("name") ?? result.user.id) (new user: \(result.isNewUser))")
            print("Properties: " + String(decoding: JSONValue.object(result.user.properties).encoded(), as: UTF8.self))
            try await client.refresh()
            print("Refreshed; state \(await client.authState)")
            await client.signOut()
            print("Signed out; state \(await client.authState)")
        } catch let error as LatchkeyError {
            print("Latchkey error \(error.code) [\(error.category)]: \(error.message)")
            exit(1)
        } catch {
            print("Error: \(error)")
            exit(1)
        }
    }

    /// What the Facebook SDK would hand the app after login, minted by the emulator's control API.
    static func facebookToken(emulator: String, appID: String, user: String) async throws -> String {
        var request = URLRequest(url: URL(string: emulator + "/_emulator/tokens")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: [
            "app_id": appID, "user": user, "scopes": ["email"],
        ])
        let (data, _) = try await URLSession.shared.data(for: request)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let token = object["access_token"] as? String
        else { throw LatchkeyError(code: "invalid_response", message: "The emulator did not mint a token.") }
        return token
    }
}
