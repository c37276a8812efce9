import Foundation
import LatchkeyAPI

/// `Tests/Vectors/crypto-vectors.json`, written by `Tests/Vectors/generate.py` with Python's own
/// HMAC, hashing and RSA/ECDSA: the vectors the module, the server, the SDK and the emulator are
/// all checked against. A target of its own so every test target reads the one file the one way.
public enum Vectors {
    /// The whole document.
    public static let document: JSONValue = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/crypto-vectors.json")
        do { return try JSONValue.decode(Data(contentsOf: url)) } catch { fatalError("vectors: \(error)") }
    }()

    /// The cases under `name` (`id_tokens`, `access_tokens`, `pkce`, …).
    public static func cases(_ name: String) -> [JSONValue] { document[name]?.arrayValue ?? [] }
    /// The time every id-token case is checked at.
    public static var now: Date { Date(timeIntervalSince1970: TimeInterval(document["now"]?.intValue ?? 0)) }
    /// The app id the id tokens are issued to.
    public static var appID: String { document["app_id"]?.stringValue ?? "" }
    /// The issuer the server accepts.
    public static var issuer: String { document["issuer"]?.stringValue ?? "" }
}
