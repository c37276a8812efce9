import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto

/// Who a callback is about: the app, the id the callback carries, and the person behind it when
/// the emulator still knows them.
struct CallbackSubject: Sendable {
    let app: EmulatorApp
    /// The app-scoped id the signed request carries.
    let userID: String
    /// `nil` for a bare app-scoped id of nobody the emulator holds (a removed test user).
    let person: Person?
}

extension EmulatorEndpoints {
    /// `POST /_emulator/callbacks/{deauthorize,data-deletion}`: sends a correctly signed (or
    /// deliberately tampered) callback to `url` (else the app's registered URL) and reports the
    /// answer; nothing else happens at "Facebook" (the scenarios play the whole story). For data
    /// deletion it also checks the reply carries `url` and `confirmation_code`, as Facebook requires.
    func sendCallback(_ input: ControlInput, kind: CallbackKind) async throws -> JSONValue {
        let subject = try await callbackSubject(input)
        let target = try callbackURL(input, kind: kind, app: subject.app)
        let timeout = try callbackTimeout(input)
        var tampering: SignedRequest.Tampering?
        if let name = input.string("tamper") {
            guard let parsed = SignedRequest.Tampering(rawValue: name) else {
                throw ControlError(
                    code: "invalid_field", "unknown tamper '\(name)'; one of: signature, algorithm, secret")
            }
            tampering = parsed
        }
        let delivery = await deliverCallback(
            kind, app: subject.app, userID: subject.userID, to: target, tampering: tampering,
            timeoutMilliseconds: timeout)
        guard case .answered(let status, let body) = delivery.outcome else {
            throw ControlError(.badGateway, code: "callback_failed", delivery.failure ?? "no answer")
        }
        var result: [String: JSONValue] = [
            "status": .int(status), "body": .string(body), "signed_request": .string(delivery.signedRequest),
            "payload": delivery.payload,
        ]
        if kind == .dataDeletion {
            let reply = DeletionReply(status: status, body: body)
            result["valid_response"] = .bool(reply.isValid)
            result["problems"] = .array(reply.problems.map(JSONValue.string))
        }
        return .object(result)
    }

    // MARK: Shared by the callbacks and the scenarios

    /// The app (`app_id`) and person (`user`) a callback is about. A removed user still has an id
    /// to report, so a bare app-scoped id is accepted as is.
    func callbackSubject(_ input: ControlInput) async throws -> CallbackSubject {
        let appID = try input.requiredString("app_id")
        guard let app = await state.app(appID) else { throw ControlError.unknownApp(appID) }
        let reference = try input.requiredString("user")
        if let person = await state.resolvePerson(reference, appID: app.id) {
            return CallbackSubject(
                app: app, userID: EmulatorState.appScopedID(appID: app.id, personKey: person.key), person: person)
        }
        guard reference.allSatisfy(\.isNumber) else { throw ControlError.unknownUser(reference) }
        return CallbackSubject(app: app, userID: reference, person: nil)
    }

    /// `timeout_ms`, 10 s unless given: how long one delivery (or one status-page fetch) may take.
    func callbackTimeout(_ input: ControlInput) throws -> Int {
        try input.int("timeout_ms", in: 100...60_000) ?? 10_000
    }

    /// `url` if given, else the URL the app registered for `kind`; refused when neither is there.
    func callbackURL(_ input: ControlInput, kind: CallbackKind, app: EmulatorApp) throws -> String {
        guard let url = input.string("url") ?? app.callbackURL(kind) else {
            throw ControlError(
                .conflict, code: "no_callback_url",
                "app \(app.id) has no \(kind.settingName); register one (POST /_emulator/apps/\(app.id)/callbacks) or give 'url'"
            )
        }
        guard WebURL.isValid(url) else {
            throw ControlError(code: "invalid_field", "'url' must be an absolute http(s) URL")
        }
        return url
    }
}
