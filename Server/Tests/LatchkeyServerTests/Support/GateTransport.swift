import Foundation
import Latchkey

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's real transport with a hand on it, for races told step by step instead of by timing:
/// a test can hold the server's answer to a path (the request has had its effect on the server;
/// only the app has not heard yet), release it when it chooses, or make the next request to a path
/// fail as if the device were offline. It also records every path sent.
actor GateTransport: LatchkeyTransport {
    private let inner = URLSessionTransport()
    private var holds: [String: Int] = [:]
    private var failures: [String: Int] = [:]
    private var parked: [String: [CheckedContinuation<Void, Never>]] = [:]
    private var parkWatchers: [String: [CheckedContinuation<Void, Never>]] = [:]
    /// Every path sent, in order (failed ones included).
    private(set) var sent: [String] = []
    /// Every answer, as path and HTTP status, in order.
    private(set) var answered: [(path: String, status: Int)] = []

    /// Holds the next answer to `path` until `release(path)`.
    func hold(_ path: String) { holds[path, default: 0] += 1 }

    /// Fails the next request to `path` without sending it, as `URLSession` does offline.
    func failNext(_ path: String) { failures[path, default: 0] += 1 }

    /// Returns once an answer to `path` is being held.
    func waitUntilHeld(_ path: String) async {
        if parked[path]?.isEmpty == false { return }
        await withCheckedContinuation { parkWatchers[path, default: []].append($0) }
    }

    /// Lets the oldest held answer to `path` reach the app.
    func release(_ path: String) {
        guard var waiting = parked[path], !waiting.isEmpty else { return }
        waiting.removeFirst().resume()
        parked[path] = waiting
    }

    /// How many requests went to `path`.
    func count(_ path: String) -> Int { sent.filter { $0 == path }.count }

    nonisolated func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        let path = request.url.path
        if await record(path) { throw URLError(.notConnectedToInternet) }
        let response = try await inner.send(request)
        await recordAnswer(path, response.status)
        await parkIfHeld(path)
        return response
    }

    /// Records `path`; whether this request is to fail.
    private func record(_ path: String) -> Bool {
        sent.append(path)
        guard let remaining = failures[path], remaining > 0 else { return false }
        failures[path] = remaining - 1
        return true
    }

    private func recordAnswer(_ path: String, _ status: Int) { answered.append((path, status)) }

    private func parkIfHeld(_ path: String) async {
        guard let remaining = holds[path], remaining > 0 else { return }
        holds[path] = remaining - 1
        await withCheckedContinuation { continuation in
            parked[path, default: []].append(continuation)
            for watcher in parkWatchers[path] ?? [] { watcher.resume() }
            parkWatchers[path] = nil
        }
    }
}
