import Foundation

/// The one rule for every URL the emulator posts to or fetches (callbacks, notifications, status
/// pages): absolute `http` or `https` with a host. Anything else would fail in the HTTP client
/// with a less helpful error, or reach a scheme no backend serves.
enum WebURL {
    /// Whether `text` is an absolute `http(s)` URL with a host.
    static func isValid(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return false }
        return true
    }
}
