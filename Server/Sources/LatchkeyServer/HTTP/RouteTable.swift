import HTTPTypes
import Hummingbird
import Synchronization

/// Which methods each path answers, so a known path asked with another method gets 405 with
/// `Allow` (RFC 9110 §15.5.6) instead of the router's 404, and the contract test can compare the
/// real routes with docs/openapi.json.
///
/// Loaded from the router's own list once every route is registered, not kept by hand beside it:
/// a route added any other way is in the table all the same. A class because the error middleware
/// must be added before the routes it wraps, so it holds the table before the table is filled.
final class RouteTable: Sendable {
    private let table = Mutex<[String: Set<HTTPRequest.Method>]>([:])

    /// Records every route `router` has.
    func load<Context>(_ router: Router<Context>) {
        let routes = router.routes
        table.withLock { table in
            for route in routes { table[route.path.description, default: []].insert(route.method) }
        }
    }

    /// The methods `path` answers, sorted, or `nil` for a path no route has. The path is read as
    /// the router reads it (`/v1/users/me/` is `/v1/users/me`).
    func methods(for path: String) -> [HTTPRequest.Method]? {
        let key = RouterPath(path).description
        return table.withLock { $0[key] }.map { $0.sorted { $0.rawValue < $1.rawValue } }
    }

    /// Every route as `METHOD path`, paths as the router writes them (`/users/{id}`).
    var routes: Set<String> {
        table.withLock { table in
            Set(table.flatMap { path, methods in methods.map { "\($0.rawValue) \(path)" } })
        }
    }
}
