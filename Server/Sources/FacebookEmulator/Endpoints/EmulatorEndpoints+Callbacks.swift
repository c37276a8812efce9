import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import NIOCore
import NIOHTTP1

extension EmulatorEndpoints {
    /// Sends a correctly signed (or deliberately tampered) callback to `url` and reports the answer.
    /// For data deletion it also checks the reply carries `url` and `confirmation_code`, as Facebook requires.
    func sendCallback(_ input: ControlInput, kind: CallbackKind) async throws -> JSONValue {
        let appID = try input.requiredString("app_id")
        guard let app = await state.app(appID) else { throw ControlError.unknownApp(appID) }
        let reference = try input.requiredString("user")
        // A removed user still has an id to report, so a bare app-scoped id is accepted as is.
        let userID =
            await state.resolvePerson(reference, appID: app.id).map {
                EmulatorState.appScopedID(appID: app.id, personKey: $0.key)
            } ?? (reference.allSatisfy(\.isNumber) ? reference : nil)
        guard let userID else { throw ControlError.unknownUser(reference) }
        let target = try input.requiredString("url")
        guard WebURL.isValid(target) else {
            throw ControlError(code: "invalid_field", "'url' must be an absolute http(s) URL")
        }
        var tampering: SignedRequest.Tampering?
        if let name = input.string("tamper") {
            guard let parsed = SignedRequest.Tampering(rawValue: name) else {
                throw ControlError(
                    code: "invalid_field", "unknown tamper '\(name)'; one of: signature, algorithm, secret")
            }
            tampering = parsed
        }
        let timeout = try input.int("timeout_ms", in: 100...60_000) ?? 10_000
        let issuedAt = Int(await state.now().timeIntervalSince1970)
        var payload: [String: JSONValue] = [
            "user_id": .string(userID), "algorithm": "HMAC-SHA256", "issued_at": .int(issuedAt),
        ]
        if kind == .dataDeletion { payload["expires"] = .int(issuedAt + 3600) }
        let (signed, sentPayload) = SignedRequest.make(
            payload: .object(payload), secret: app.secret, tampering: tampering)

        var outgoing = HTTPClientRequest(url: target)
        outgoing.method = .POST
        outgoing.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        outgoing.headers.add(name: "User-Agent", value: "facebookexternalua")
        outgoing.body = .bytes(ByteBuffer(string: FormEncoding.encode([("signed_request", signed)])))
        let status: Int
        let body: String
        do {
            let response = try await httpClient.execute(outgoing, timeout: .milliseconds(Int64(timeout)))
            status = Int(response.status.code)
            body = String(buffer: try await response.body.collect(upTo: 64 * 1024))
        } catch {
            throw ControlError(.badGateway, code: "callback_failed", "could not deliver the callback: \(error)")
        }
        var result: [String: JSONValue] = [
            "status": .int(status), "body": .string(body), "signed_request": .string(signed),
            "payload": sentPayload,
        ]
        if kind == .dataDeletion {
            let reply = try? JSONValue.decode(Data(body.utf8))
            let valid =
                (200..<300).contains(status) && reply?["url"]?.stringValue?.isEmpty == false
                && reply?["confirmation_code"]?.stringValue?.isEmpty == false
            result["valid_response"] = .bool(valid)
        }
        return .object(result)
    }
}
