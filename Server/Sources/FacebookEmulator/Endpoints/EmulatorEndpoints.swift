import AsyncHTTPClient
import Foundation
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Logging

/// The handlers behind every emulator path; one file per concept extends it.
struct EmulatorEndpoints: Sendable {
    let state: EmulatorState
    let httpClient: HTTPClient
    let logger: Logger

    func handle(_ endpoint: Endpoint, _ request: EmulatorRequest) async throws -> Response {
        switch endpoint {
        case .dialog(let submit): return try await dialog(request, submitted: submit)
        case .accessToken: return try await accessToken(request)
        case .debugToken: return try await debugToken(request)
        case .app: return try await appInfo(request)
        case .discovery: return discovery(request)
        case .jwks: return await jwks()
        case .certificates: return await certificates()
        case .publicKeys: return await publicKeys()
        case .profilePicture: return profilePicture(request)
        case .user(let id): return try await user(id: id, request)
        case .updateTestUser(let id): return try await updateTestUser(id: id, request)
        case .deleteUser(let id): return try await deleteTestUser(id: id, request)
        case .permissions(let id): return try await permissions(id: id, request)
        case .revokePermissions(let id, let permission):
            return try await revokePermissions(id: id, permission: permission, request)
        case .testUsers(let appID, let create):
            return create
                ? try await createTestUser(appID: appID, request) : try await listTestUsers(appID: appID, request)
        case .friendship(let first, let second): return try await befriend(first, second, request)
        case .pictureEdge(let id): return try await pictureEdge(id: id, request)
        case .appleKeys: return await appleKeys()
        case .appleToken: return try await appleToken(request)
        case .appleRevoke: return try await appleRevoke(request)
        }
    }

    // MARK: Shared checks

    /// The app named by `client_id`, with Facebook's token-endpoint errors.
    func clientApp(_ request: EmulatorRequest) async throws -> EmulatorApp {
        guard let clientID = request["client_id"] else {
            throw GraphError(message: "Missing client_id parameter.", code: 101)
        }
        guard let app = await state.app(clientID) else {
            throw GraphError(message: "Error validating application. Invalid application ID.", code: 101)
        }
        return app
    }

    /// Checks `client_secret` in constant time.
    func verifySecret(_ request: EmulatorRequest, app: EmulatorApp) throws {
        guard let secret = request["client_secret"] else {
            throw GraphError(message: "Missing client_secret parameter.", code: 100)
        }
        guard ConstantTime.equals(secret, app.secret) else {
            throw GraphError(message: "Error validating client secret.", code: 1)
        }
    }

    /// The caller's token, validated; Graph errors for missing, unknown, expired or revoked tokens.
    func presentedToken(_ request: EmulatorRequest) async throws -> PresentedToken {
        guard let token = request.accessToken else { throw GraphError.activeTokenRequired }
        let presented = try await state.validate(token: token).get()
        switch presented {
        case .user(let record):
            if let app = await state.app(record.appID) { try verifyProof(request, token: token, app: app) }
        case .app(let app):
            // Server-to-server calls with the app token carry the secret already; a proof is
            // checked when sent but never required.
            if request["appsecret_proof"] != nil { try verifyProof(request, token: token, app: app) }
        }
        return presented
    }

    /// An app token, required by `debug_token` and the test-user API.
    func appToken(_ request: EmulatorRequest) async throws -> EmulatorApp {
        guard let token = request.accessToken else { throw GraphError.appTokenRequired }
        switch await state.validate(token: token) {
        case .success(.app(let app)): return app
        case .success(.user): throw GraphError.appTokenRequired
        case .failure(let error): throw error
        }
    }

    /// `appsecret_proof` (§5.2): checked whenever sent, required when the app says so.
    func verifyProof(_ request: EmulatorRequest, token: String, app: EmulatorApp) throws {
        if let proof = request["appsecret_proof"] {
            guard AppSecretProof.isValid(proof, accessToken: token, secret: app.secret) else {
                throw GraphError(
                    message: "Invalid appsecret_proof provided in the API argument", type: "GraphMethodException",
                    code: 100)
            }
        } else if app.requireAppSecretProof {
            throw GraphError(
                message: "API calls from the server require an appsecret_proof argument", type: "GraphMethodException",
                code: 100)
        }
    }
}
