import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import Logging
import NIOCore

/// Routes every request by hand rather than through a trie router: Graph mixes fixed paths
/// (`/me`, `/debug_token`) with object ids at the same depth and allows an optional version
/// prefix, which a first-match trie cannot express reliably. Counting, fault injection and the
/// error envelope all live here, so each endpoint only handles its own success and error cases.
struct EmulatorResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let endpoints: EmulatorEndpoints
    let publicURL: String?
    let maximumBodySize: Int
    let logger: Logger

    func respond(to request: Request, context: Context) async throws -> Response {
        let traceID = RandomString.traceID()
        var response: Response
        var isApple = false
        do {
            let parsed = try await EmulatorRequest.read(
                request, publicURL: publicURL, maximumBodySize: maximumBodySize)
            isApple = appleEndpoint(parsed) != nil
            response = try await route(parsed, traceID: traceID)
        } catch let error as GraphError {
            response = .graphError(error, traceID: traceID)
        } catch let error as AppleError {
            response = .json(error.body, status: error.status)
        } catch let error as ControlError {
            response = .json(error.body, status: error.status)
        } catch is NIOTooManyBytesError {
            response = .json(
                GraphError(status: .contentTooLarge, message: "Request body too large", code: 1).envelope(
                    traceID: traceID), status: .contentTooLarge)
        } catch {
            // Never a Swift error dump: Facebook's generic failure, and the cause in our log only.
            logger.error("emulator.request.failed", metadata: ["emulator.error": "\(String(reflecting: error))"])
            response = .json(
                GraphError(status: .internalServerError, message: "An unknown error has occurred.", code: 1)
                    .envelope(traceID: traceID), status: .internalServerError)
        }
        // Apple's answers carry none of Facebook's headers.
        if !isApple {
            response.headers[.init("x-fb-trace-id")!] = traceID
            response.headers[.init("facebook-api-version")!] = "v21.0"
        }
        return response
    }

    /// The Apple endpoint a request is for, when the emulator plays Apple too.
    private func appleEndpoint(_ request: EmulatorRequest) -> Endpoint? {
        guard endpoints.state.appleRegistration != nil else { return nil }
        return Endpoint.matchApple(method: request.method, segments: request.segments)
    }

    private func route(_ request: EmulatorRequest, traceID: String) async throws -> Response {
        let segments = request.segments
        if segments.first == "_emulator" {
            return try await endpoints.control(request, path: Array(segments.dropFirst()))
        }
        // Graph lets clients that cannot send DELETE or POST say so with `method=` (Koala sends
        // deletions as POST with `method=delete`).
        var method = request.method
        if method == .get || method == .post, let override = request["method"]?.uppercased() {
            if override == "DELETE" { method = .delete } else if override == "POST" { method = .post }
        }
        guard let endpoint = appleEndpoint(request) ?? Endpoint.match(method: method, segments: segments) else {
            throw GraphError.unknownPath(segments.joined(separator: "/"))
        }
        // Only a scheme followed by a credential is recorded; a bare credential never is.
        let scheme = request.headers[.authorization].flatMap { header -> String? in
            let parts = header.split(separator: " ", maxSplits: 1)
            return parts.count == 2 ? String(parts[0]) : nil
        }
        let recorded = RecordedRequest(
            method: method.rawValue, path: request.rawPath, query: request.rawQuery, endpoint: endpoint.name,
            authorizationScheme: scheme)
        // `client_id` names the app only on the token endpoint; elsewhere it would let anyone
        // spend any app's budget without a credential.
        let caller =
            endpoint.isGraphCall
            ? CallerHint(token: request.accessToken, clientID: endpoint == .accessToken ? request["client_id"] : nil)
            : nil
        let (fault, usage) = await endpoints.state.recordCall(
            endpoint: endpoint.name, request: recorded, caller: caller)
        var request = request
        if fault?.sendsSubcodes == false { request.sendsSubcodes = false }
        var response: Response
        do {
            if let fault, fault.latencyMilliseconds > 0 {
                try await Task.sleep(for: .milliseconds(fault.latencyMilliseconds))
            }
            if endpoint.isApple, let error = fault?.error {
                throw AppleError.injected(status: error.status, error: fault?.appleError)
            }
            if let error = fault?.error { throw error }
            if let throttle = usage.throttle { throw throttle }
            response = try await endpoints.handle(endpoint, request)
        } catch var error as GraphError {
            if !request.sendsSubcodes { error.subcode = nil }
            response = .graphError(error, traceID: traceID)
        } catch let error as AppleError {
            response = .json(error.body, status: error.status)
        }
        // Facebook reports platform usage on most Graph answers, throttled ones included.
        if let usage = usage.usage { response.headers[.init("x-app-usage")!] = usage.headerValue }
        for change in fault?.headers ?? [] { response.headers[change.name] = change.value }
        return response
    }
}
