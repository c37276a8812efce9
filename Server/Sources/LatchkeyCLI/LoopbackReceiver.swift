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
        var description: String { "No sign-in came back from the browser in time." }
    }

    /// No loopback port could be opened.
    struct CannotListen: Error, CustomStringConvertible {
        var description: String { "Could not listen on a loopback port for the browser's redirect." }
    }

    /// Runs `body` with the redirect URI to register and a function that waits, until a deadline,
    /// for the next request to it (several may come: any local program can call a loopback port).
    static func run<Value: Sendable>(
        path: String = "/callback",
        _ body:
            @Sendable (_ redirectURI: String, _ next: @Sendable (ContinuousClock.Instant) async throws -> URL)
            async throws -> Value
    ) async throws -> Value {
        var logger = Logger(label: "latchkey.login")
        logger.logLevel = .critical
        // Path and query of each request; bounded, so a flood of local requests cannot grow memory.
        let (requests, delivered) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(16))
        let (ports, bound) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingOldest(1))
        let router = Router()
        router.get(RouterPath(path)) { request, _ -> Response in
            delivered.yield(request.uri.description)
            return page
        }
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "latchkey-login"),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [application], logger: logger))
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                // If binding fails, the waiting flow must learn it instead of waiting forever.
                defer { bound.finish() }
                try await services.run()
                return nil
            }
            let outcome: Result<Value, any Error>
            do {
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next(), port != 0 else { throw CannotListen() }
                // The URL is rebuilt from the bound port, never from the request's Host header.
                let base = "http://127.0.0.1:\(port)"
                outcome = .success(
                    try await body(base + path) { deadline in
                        // A request target that does not make a URL is someone else's noise: wait on.
                        while true {
                            if let url = URL(string: base + (try await next(of: requests, until: deadline))) {
                                return url
                            }
                        }
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

    /// The next request, or `TimedOut` at `deadline`.
    private static func next(
        of requests: AsyncStream<String>, until deadline: ContinuousClock.Instant
    ) async throws -> String {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                var iterator = requests.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let target = first else {
                throw TimedOut()
            }
            return target
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
