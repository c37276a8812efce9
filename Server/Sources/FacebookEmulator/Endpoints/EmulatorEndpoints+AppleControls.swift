import Foundation
import HTTPTypes
import LatchkeyAPI

extension EmulatorEndpoints {
    /// The control API for Apple's side, under `/_emulator/apple/`: what the device receives from
    /// a Sign in with Apple authorization, notifications, tokens and keys.
    func appleControl(_ request: EmulatorRequest, path: [String]) async throws -> JSONValue {
        guard let registration = state.appleRegistration else {
            throw ControlError(
                .notFound, code: "apple_not_configured", "the emulator has no Sign in with Apple registration")
        }
        let input = ControlInput(request: request)
        switch (request.method, path) {
        case (.post, ["authorizations"]): return try await appleAuthorization(input, registration: registration)
        case (.post, ["notifications"]): return try await appleNotification(input, registration: registration)
        case (.get, ["tokens"]): return await appleTokenList()
        case (.post, ["tokens", "revoke"]): return try await revokeAppleTokens(input)
        case (.get, ["keys"]): return await appleKeyList()
        case (.post, ["keys", "rotate"]):
            try await state.rotateAppleKey()
            return await appleKeyList()
        case (.delete, let parts) where parts.count == 2 && parts[0] == "keys":
            guard await state.removeAppleKey(kid: parts[1]) else {
                throw ControlError(
                    .notFound, code: "unknown_key", "no removable Apple key '\(parts[1])' (the signing key stays)")
            }
            return await appleKeyList()
        default:
            throw ControlError(
                .notFound, code: "unknown_control",
                "no control endpoint \(request.method) /_emulator/apple/\(path.joined(separator: "/"))")
        }
    }

    /// The `apple` member of `GET /_emulator`.
    func appleOverview() async -> JSONValue? {
        guard let registration = state.appleRegistration else { return nil }
        let people = await state.allPeople()
        return [
            "team_id": .string(registration.teamID), "key_id": .string(registration.keyID),
            "client_ids": .array(registration.clientIDs.map(JSONValue.string)),
            "notification_url": registration.notificationURL.map(JSONValue.string) ?? .null,
            "keys": .array(await state.appleKeys.map { .string($0.kid) }),
            "users": .array(
                people.map { person in
                    [
                        "key": .string(person.key),
                        "sub": .string(AppleIdentity.subject(teamID: registration.teamID, personKey: person.key)),
                        "email": person.email.map(JSONValue.string) ?? .null,
                        "private_email": .string(
                            AppleIdentity.relayEmail(teamID: registration.teamID, personKey: person.key)),
                    ]
                }),
        ]
    }

    /// The person a control call names by key or Apple `sub`.
    private func applePerson(_ input: ControlInput) async throws -> Person {
        let reference = try input.requiredString("user")
        guard let person = await state.applePerson(reference) else {
            throw ControlError(.notFound, code: "unknown_user", "no user '\(reference)' (give a key or an Apple sub)")
        }
        return person
    }

    private func registeredClientID(_ value: String, registration: AppleRegistration) throws -> String {
        guard registration.clientIDs.contains(value) else {
            throw ControlError(
                code: "invalid_field",
                "client_id '\(value)' is not registered; one of: \(registration.clientIDs.joined(separator: ", "))")
        }
        return value
    }

    /// `POST /_emulator/apple/authorizations`: one Sign in with Apple authorization on a device.
    private func appleAuthorization(_ input: ControlInput, registration: AppleRegistration) async throws -> JSONValue {
        let person = try await applePerson(input)
        let clientID = try registeredClientID(try input.requiredString("client_id"), registration: registration)
        let scopes = input.list("scopes") ?? ["name", "email"]
        if let unknown = scopes.first(where: { $0 != "name" && $0 != "email" }) {
            throw ControlError(code: "invalid_field", "unknown scope '\(unknown)'; Apple's are name and email")
        }
        let claimTypes = input.string("claim_types") ?? "boolean"
        guard claimTypes == "boolean" || claimTypes == "string" else {
            throw ControlError(code: "invalid_field", "'claim_types' must be 'boolean' or 'string'")
        }
        var defect: AppleIDTokenDefect?
        if let name = input.string("defect") {
            guard let parsed = AppleIDTokenDefect(rawValue: name) else {
                let names = AppleIDTokenDefect.allCases.map(\.rawValue).joined(separator: ", ")
                throw ControlError(code: "invalid_field", "unknown defect '\(name)'; one of: \(names)")
            }
            defect = parsed
        }
        let request = AppleAuthorizationRequest(
            clientID: clientID, scopes: Set(scopes), hidesEmail: input.bool("hide_email") ?? false,
            nonce: input.string("nonce"), redirectURI: input.string("redirect_uri"),
            shape: AppleTokenShape(
                issuer: input.string("issuer") ?? EmulatorState.appleIssuer, stringBooleans: claimTypes == "string",
                omitsEmail: input.bool("omit_email") ?? false),
            lifetime: try input.int("lifetime_seconds", in: 1...31_536_000) ?? 600, defect: defect)
        guard let credential = try await state.authorizeApple(person: person, request) else {
            throw ControlError(
                .notFound, code: "apple_not_configured", "the emulator has no Sign in with Apple registration")
        }
        return [
            "identity_token": .string(credential.identityToken),
            "authorization_code": .string(credential.authorizationCode), "user": .string(credential.subject),
            "email": credential.email.map(JSONValue.string) ?? .null,
            "full_name": credential.fullName.map {
                [
                    "given_name": $0.given.map(JSONValue.string) ?? .null,
                    "family_name": $0.family.map(JSONValue.string) ?? .null,
                ]
            } ?? .null,
            "claims": credential.claims,
        ]
    }

    /// `GET /_emulator/apple/tokens`: what `/auth/token` issued and whether it is revoked, so a test
    /// can check that a backend revoked what it held.
    private func appleTokenList() async -> JSONValue {
        let tokens = await state.appleTokens()
        let subject: (String) -> JSONValue = { key in
            .string(AppleIdentity.subject(teamID: state.appleRegistration?.teamID ?? "", personKey: key))
        }
        let describe: (AppleToken) -> JSONValue = { token in
            [
                token.kind.rawValue: .string(token.token), "client_id": .string(token.clientID),
                "user": subject(token.personKey), "revoked": .bool(token.revokedAt != nil),
                "revoked_at": token.revokedAt.map { .int(Int($0.timeIntervalSince1970)) } ?? .null,
                "revoked_by": token.revokedBy.map(JSONValue.string) ?? .null,
            ]
        }
        return [
            "tokens": .array(tokens.filter { $0.kind == .refresh }.map(describe)),
            "access_tokens": .array(tokens.filter { $0.kind == .access }.map(describe)),
        ]
    }

    /// `POST /_emulator/apple/tokens/revoke`: revokes a refresh token (or every token of a person)
    /// behind the backend's back, as a password change does at Apple.
    private func revokeAppleTokens(_ input: ControlInput) async throws -> JSONValue {
        if let token = input.string("refresh_token") {
            guard let revoked = await state.revokeAppleRefreshToken(token) else {
                throw ControlError(.notFound, code: "unknown_token", "the emulator did not issue this refresh token")
            }
            return ["revoked": .int(revoked ? 1 : 0)]
        }
        guard input.string("user") != nil else {
            throw ControlError(code: "missing_field", "give 'refresh_token' or 'user'")
        }
        let person = try await applePerson(input)
        return ["revoked": .int(await state.revokeAppleTokens(personKey: person.key))]
    }

    private func appleKeyList() async -> JSONValue {
        let keys = await state.appleKeys
        return ["active": .string(keys.first?.kid ?? ""), "keys": .array(keys.map { .string($0.kid) })]
    }
}
