import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import NIOCore
import NIOHTTP1

/// A provider's id-token keys (Facebook's Limited Login keys, Apple's `/auth/keys`), cached as the
/// provider's `Cache-Control` allows.
///
/// An unknown `kid` triggers a refetch at most once per `refetchInterval` (so forged kids cannot
/// make us hammer Facebook), and a failed fetch keeps serving the keys already known.
actor KeySetCache {
    private let client: HTTPClient
    private let url: String
    private let timeout: TimeInterval
    private let refetchInterval: TimeInterval
    private let clock: @Sendable () -> Date
    /// Whose keys these are, and where fetches are counted (`latchkey_jwks_refreshes_total`).
    private let provider: String
    private let metrics: ServerMetrics?
    /// The error when no key can be had: the provider is down.
    private let unavailable: @Sendable (any Error & Sendable) -> APIError

    private var keys: [String: RSAPublicKey] = [:]
    private var freshUntil: Date = .distantPast
    private var lastFetch: Date = .distantPast
    private var inFlight: Task<Void, any Error>?

    init(
        client: HTTPClient, url: String, timeout: TimeInterval, refetchInterval: TimeInterval,
        clock: @escaping @Sendable () -> Date, provider: String = "facebook", metrics: ServerMetrics? = nil,
        unavailable: @escaping @Sendable (any Error & Sendable) -> APIError = {
            APIError.facebookUnavailable("Facebook's signing keys could not be fetched.", cause: $0)
        }
    ) {
        self.provider = provider
        self.metrics = metrics
        self.unavailable = unavailable
        self.client = client
        self.url = url
        self.timeout = timeout
        self.refetchInterval = refetchInterval
        self.clock = clock
    }

    /// The key for `kid`, fetching when the cache is stale or the kid is new; `nil` when Facebook
    /// does not publish it.
    /// - Throws: the `unavailable` error (`facebook_unavailable` by default) only when the kid is
    ///   not among the keys known and none could be fetched.
    func key(kid: String) async throws -> RSAPublicKey? {
        let now = clock()
        let stale = now >= freshUntil
        let unknownAndMayRefetch = keys[kid] == nil && now.timeIntervalSince(lastFetch) >= refetchInterval
        if stale || unknownAndMayRefetch {
            do {
                try await refresh()
            } catch {
                // Back off: serve the stale keys for a while instead of making every login wait
                // for another failing fetch.
                freshUntil = clock().addingTimeInterval(refetchInterval)
                if keys.isEmpty || keys[kid] == nil {
                    throw unavailable(error)
                }
            }
        }
        return keys[kid]
    }

    /// One fetch at a time; concurrent callers share it.
    private func refresh() async throws {
        if let inFlight { return try await inFlight.value }
        let task = Task { try await self.fetch() }
        inFlight = task
        defer { inFlight = nil }
        try await task.value
    }

    private func fetch() async throws {
        lastFetch = clock()
        let started = ContinuousClock.now
        do {
            try await fetchOnce()
            metrics?.keySetRefresh(provider: provider, succeeded: true)
            metrics?.providerCall(provider: provider, endpoint: "jwks", failed: false, duration: .now - started)
        } catch {
            metrics?.keySetRefresh(provider: provider, succeeded: false)
            metrics?.providerCall(provider: provider, endpoint: "jwks", failed: true, duration: .now - started)
            throw error
        }
    }

    private func fetchOnce() async throws {
        var request = try HTTPClient.Request(url: url, method: .GET)
        request.headers.add(name: "Accept", value: "application/json")
        let (status, headers, body) = try await BoundedExchange(client: client, timeout: timeout).send(request)
        let cacheControl = headers["Cache-Control"].first
        guard status == 200 else { throw KeySetError.badStatus(status) }
        keys = try Self.parse(JSONValue.decode(Data(body.readableBytesView)))
        freshUntil = clock().addingTimeInterval(Self.maxAge(cacheControl) ?? 3600)
    }

    /// The RS256 keys of a JWKS document, by `kid` (the shared reader, `RSAJWK`).
    static func parse(_ document: JSONValue) throws -> [String: RSAPublicKey] {
        let parsed = RSAJWK.signingKeys(in: document)
        guard !parsed.isEmpty else { throw KeySetError.noKeys }
        return parsed
    }

    /// Installs a key set that never goes stale (the micro benchmarks, which have no Facebook).
    func pin(_ document: JSONValue) throws {
        keys = try Self.parse(document)
        freshUntil = .distantFuture
        lastFetch = .distantFuture
    }

    /// `max-age` from a Cache-Control header, bounded to a day; `no-store`/`no-cache` mean a minute,
    /// so a misconfigured header cannot turn every login into a key fetch.
    static func maxAge(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        let directives = header.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if directives.contains("no-store") || directives.contains("no-cache") { return 60 }
        for directive in directives where directive.hasPrefix("max-age=") {
            if let seconds = TimeInterval(directive.dropFirst(8)) { return min(max(seconds, 60), 86_400) }
        }
        return nil
    }
}

enum KeySetError: Error, Sendable {
    case badStatus(Int)
    case noKeys
}
