import Foundation
import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// Second factors: a person's authenticators and recovery codes, step-up challenges, and
/// `POST /v1/auth/factor`, which completes a sign-in or a step-up with a code.
struct FactorsController: Controller {
    let factors: SecondFactorService
    let limits: AbuseLimits
    let reading: RequestReading
    /// Checks the token and that its session is active.
    let sessionChecked: BearerAuthentication

    /// The fields of each request: the wire types', which the SDK writes.
    static let enrollmentFields = FactorEnrollmentRequest.CodingKeys.fieldNames
    static let codeFields = FactorCodeRequest.CodingKeys.fieldNames
    static let responseFields = FactorChallengeResponse.CodingKeys.fieldNames

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/auth/factor") { request, context in
            // Counted as a sign-in: it is the second half of one.
            _ = try await limits.enforceSignIn(request, context)
            let fields = try Self.withoutNulls(try await reading.fields(request, allowed: Self.responseFields))
            typealias Key = FactorChallengeResponse.CodingKeys
            guard let challenge = try RequestReading.string(fields, Key.challenge.stringValue, maxLength: 128) else {
                throw APIError.invalidRequest("challenge is required.")
            }
            let response = FactorChallengeResponse(
                challenge: challenge, code: try RequestReading.string(fields, Key.code.stringValue, maxLength: 16),
                recoveryCode: try RequestReading.string(fields, Key.recoveryCode.stringValue, maxLength: 64))
            switch try await factors.complete(response, client: limits.clientInfo(request, context)) {
            case .signIn(let body): return try Response.json(body)
            case .stepUp(let body): return try Response.json(body)
            case .easyLogin: throw APIError.invalidRequest("This challenge is completed on its sign-in page.")
            }
        }
        let signedIn = router.group().add(middleware: sessionChecked)
        signedIn.route(.get, "/v1/users/me/factors") { _, context in
            try Response.json(try await factors.list(try context.authenticatedSession()))
        }
        signedIn.route(.post, "/v1/users/me/factors") { request, context in
            let fields = try Self.withoutNulls(try await reading.fields(request, allowed: Self.enrollmentFields))
            typealias Key = FactorEnrollmentRequest.CodingKeys
            let enrollment = FactorEnrollmentRequest(
                type: try RequestReading.string(fields, Key.type.stringValue, maxLength: 16) ?? "",
                displayName: try RequestReading.string(fields, Key.displayName.stringValue, maxLength: 256))
            return try Response.json(
                try await factors.enroll(try context.authenticatedSession(), enrollment), status: .created)
        }
        signedIn.route(.post, "/v1/users/me/factors/challenge") { request, context in
            _ = try await reading.fields(request, allowed: [])
            return try Response.json(try await factors.stepUp(try context.authenticatedSession()))
        }
        signedIn.route(.post, "/v1/users/me/factors/{id}/verify") { request, context in
            let id = try Self.factorID(context)
            let fields = try Self.withoutNulls(try await reading.fields(request, allowed: Self.codeFields))
            guard
                let code = try RequestReading.string(
                    fields, FactorCodeRequest.CodingKeys.code.stringValue, maxLength: 16)
            else { throw APIError.invalidRequest("code is required.") }
            return try Response.json(
                try await factors.verify(
                    try context.authenticatedSession(), factorID: id, code: code.replacingOccurrences(of: " ", with: "")
                ))
        }
        signedIn.route(.delete, "/v1/users/me/factors/{id}") { _, context in
            try await factors.remove(try context.authenticatedSession(), factorID: try Self.factorID(context))
            return Response(status: .noContent)
        }
        signedIn.route(.post, "/v1/users/me/recovery-codes") { request, context in
            _ = try await reading.fields(request, allowed: [])
            return try Response.json(try await factors.regenerateRecoveryCodes(try context.authenticatedSession()))
        }
    }

    /// `fields`, refusing an explicit `null`: every field here is a string, absent or given, as the
    /// document says (a `null` read as absent would accept what the contract refuses).
    private static func withoutNulls(_ fields: [String: JSONValue]) throws -> [String: JSONValue] {
        if let name = fields.first(where: { $0.value == .null })?.key {
            throw APIError.invalidRequest("'\(name)' must be a string.")
        }
        return fields
    }

    /// The `{id}` of a factor route: factor ids are 16 URL-safe characters, anything far longer
    /// names none.
    private static func factorID(_ context: LatchkeyRequestContext) throws -> String {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.utf8.count <= 64 else {
            throw APIError(.notFound, .factorNotFound, "No factor of yours has this id.")
        }
        return id
    }
}
