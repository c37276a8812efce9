import Foundation

/// A browser sheet that opens a URL and hands back the redirect, as Easy Login needs it:
/// `ASWebAuthenticationSession` on Apple platforms (`EasyLoginPresenter` in `import Latchkey`),
/// anything else elsewhere (tests drive the emulator's dialog with one).
public protocol WebAuthenticator: Sendable {
    /// Shows `url` and returns the URL the browser was finally sent to, one matching `callback`.
    /// - Throws: `LatchkeyError` with code `user_cancelled` when the person closed the sheet;
    ///   `CancellationError` when the task was cancelled; anything else for other failures.
    func authenticate(url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool) async throws -> URL
}

/// Which redirect ends a web authentication session, derived from the app's redirect URI.
public enum WebAuthenticationCallback: Sendable, Equatable {
    /// A custom URL scheme, e.g. `myapp` for `myapp://auth`.
    case customScheme(String)
    /// A universal link on `host` at `path` (`https://app.example.com/auth`).
    case https(host: String, path: String)

    /// The callback of `redirectURI`; `nil` for what a web authentication session cannot catch
    /// (plain `http`, including loopback redirects, which desktop apps serve themselves).
    public init?(redirectURI: String) {
        guard let components = URLComponents(string: redirectURI), let scheme = components.scheme?.lowercased()
        else { return nil }
        switch scheme {
        case "http": return nil
        case "https":
            guard let host = components.host, !host.isEmpty else { return nil }
            self = .https(host: host, path: components.path.isEmpty ? "/" : components.path)
        default: self = .customScheme(scheme)
        }
    }
}
