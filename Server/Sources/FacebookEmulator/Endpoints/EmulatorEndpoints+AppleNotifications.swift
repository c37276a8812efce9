import AsyncHTTPClient
import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore
import NIOHTTP1

extension EmulatorEndpoints {
    /// `POST /_emulator/apple/notifications`: signs a server-to-server notification with Apple's
    /// current key and, unless `deliver` is false, POSTs `{"payload": "<JWS>"}` to the URL as Apple
    /// does (no authentication header: the signature is the only proof). The event's effect
    /// (consent revoked, account deleted) happens at Apple whether or not delivery succeeds.
    func appleNotification(_ input: ControlInput, registration: AppleRegistration) async throws -> JSONValue {
        let reference = try input.requiredString("user")
        guard let person = await state.applePerson(reference) else {
            throw ControlError(.notFound, code: "unknown_user", "no user '\(reference)' (give a key or an Apple sub)")
        }
        let typeName = try input.requiredString("type")
        guard let type = AppleEventType(rawValue: typeName) else {
            let names = AppleEventType.allCases.map(\.rawValue).joined(separator: ", ")
            throw ControlError(code: "invalid_field", "unknown type '\(typeName)'; one of: \(names)")
        }
        let audience = input.string("client_id") ?? registration.clientIDs[0]
        guard registration.clientIDs.contains(audience) else {
            throw ControlError(code: "invalid_field", "client_id '\(audience)' is not registered")
        }
        let deliver = input.bool("deliver") ?? true
        var target: String?
        if deliver {
            guard let url = input.string("url") ?? registration.notificationURL else {
                throw ControlError(code: "missing_field", "give 'url' or register a notification URL")
            }
            guard WebURL.isValid(url) else {
                throw ControlError(code: "invalid_field", "'url' must be an absolute http(s) URL")
            }
            target = url
        }
        let timeout = try input.int("timeout_ms", in: 100...60_000) ?? 10_000
        guard let (payload, jti) = try await state.appleNotification(person: person, type: type, audience: audience)
        else {
            throw ControlError(
                .notFound, code: "apple_not_configured", "the emulator has no Sign in with Apple registration")
        }
        guard let target else { return ["payload": .string(payload), "jti": .string(jti)] }

        var outgoing = HTTPClientRequest(url: target)
        outgoing.method = .POST
        outgoing.headers.add(name: "Content-Type", value: "application/json")
        outgoing.body = .bytes(ByteBuffer(bytes: JSONValue.object(["payload": .string(payload)]).encoded()))
        do {
            let response = try await httpClient.execute(outgoing, timeout: .milliseconds(Int64(timeout)))
            let body = String(buffer: try await response.body.collect(upTo: 64 * 1024))
            return [
                "payload": .string(payload), "jti": .string(jti), "status": .int(Int(response.status.code)),
                "body": .string(body),
            ]
        } catch {
            throw ControlError(
                .badGateway, code: "notification_failed", "could not deliver the notification: \(error)")
        }
    }
}
