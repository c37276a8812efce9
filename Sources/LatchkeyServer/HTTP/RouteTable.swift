import HTTPTypes
import Synchronization

/// Which methods each path answers, recorded as routes are registered, so a known path asked with
/// another method gets 405 with `Allow` (RFC 9110 §15.5.6) instead of the router's 404, and the
/// contract test can compare the real routes with docs/openapi.json.
final class RouteTable: Sendable {
    private let table = Mutex<[String: Set<HTTPRequest.Method>]>([:])

    func record(_ method: HTTPRequest.Method, _ path: String) {
        table.withLock { _ = $0[path, default: []].insert(method) }
    }

    /// The methods `path` answers, sorted, or `nil` for a path no route has.
    func methods(for path: String) -> [HTTPRequest.Method]? {
        table.withLock { $0[path] }.map { $0.sorted { $0.rawValue < $1.rawValue } }
    }

    /// Every route as `METHOD path`.
    var routes: Set<String> {
        table.withLock { table in
            Set(table.flatMap { path, methods in methods.map { "\($0.rawValue) \(path)" } })
        }
    }
}
