import Foundation

/// RFC 8252 §7.3: a native app's loopback redirect URI (`http://127.0.0.1:PORT/…`,
/// `http://[::1]:PORT/…`) matches on any port, since the app picks a free one at run time. The
/// server's registration check and the SDK's "is this my redirect" check must agree, so both
/// compare through `matchKey`. `localhost` is not loopback here: it may resolve elsewhere (§8.3).
public enum LoopbackRedirect {
    /// Whether `components` name an `http` loopback IP literal.
    public static func isLoopback(_ components: URLComponents) -> Bool {
        guard components.scheme?.lowercased() == "http", let host = components.host else { return false }
        return host == "127.0.0.1" || host == "[::1]" || host == "::1"
    }

    /// `uri` without its port when it is a loopback URI, `uri` unchanged otherwise: two redirect
    /// URIs are the same redirect exactly when their keys are equal.
    public static func matchKey(_ uri: String) -> String {
        guard var components = URLComponents(string: uri), isLoopback(components) else { return uri }
        components.port = nil
        return components.string ?? uri
    }
}
