import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Receives the one redirect of a desktop sign-in on a loopback port the system picks (RFC 8252
/// §7.3): the browser is sent to `http://127.0.0.1:PORT/callback?code=…`, and this hands that URL
/// to the waiting flow.
enum LoopbackReceiver {
    /// The browser took too long (or never came back).
    struct TimedOut: Error, CustomStringConvertible {
        let seconds: Int
        var description: String { "No sign-in came back within \(seconds) seconds." }
    }

    /// Runs `body` with the redirect URI to register and a function that waits for the redirect.
    static func run<Value: Sendable>(
        path: String = "/callback",
        _ body:
            @Sendable (_ redirectURI: String, _ next: @Sendable (Duration) async throws -> URL) async throws -> Value
    ) async throws -> Value {
        var logger = Logger(label: "latchkey.login")
        logger.logLevel = .error
        let (redirects, delivered) = AsyncStream<URL>.makeStream(bufferingPolicy: .bufferingOldest(1))
        let (ports, bound) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingOldest(1))
        let router = Router()
        router.get(RouterPath(path)) { request, _ -> Response in
            if let port = request.head.authority?.split(separator: ":").last,
                let url = URL(
                    string: "http://127.0.0.1:\(port)\(request.uri.description)")
            {
                delivered.yield(url)
            }
            return page
        }
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "latchkey-login"),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [application], logger: logger))
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                try await services.run()
                return nil
            }
            let outcome: Result<Value, any Error>
            do {
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next(), port != 0 else { throw TimedOut(seconds: 0) }
                outcome = .success(
                    try await body("http://127.0.0.1:\(port)\(path)") { timeout in
                        try await first(of: redirects, within: timeout)
                    })
            } catch {
                outcome = .failure(error)
            }
            // A graceful stop: the page was sent with `Connection: close`, so nothing lingers.
            await services.triggerGracefulShutdown()
            try? await group.waitForAll()
            return try outcome.get()
        }
    }

    /// The first redirect, or `TimedOut`.
    private static func first(of redirects: AsyncStream<URL>, within timeout: Duration) async throws -> URL {
        try await withThrowingTaskGroup(of: URL?.self) { group in
            group.addTask {
                var iterator = redirects.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let url = first else {
                throw TimedOut(seconds: Int(timeout.components.seconds))
            }
            return url
        }
    }

    /// What the browser shows once it has delivered the redirect.
    private static var page: Response {
        let html = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Latchkey</title>\
            <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}</style>\
            </head><body><h1>Back to your terminal</h1>\
            <p>Latchkey received the sign-in. You can close this window.</p></body></html>
            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.connection] = "close"
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
