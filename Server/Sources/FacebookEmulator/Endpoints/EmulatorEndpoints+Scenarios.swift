import LatchkeyAPI

extension EmulatorEndpoints {
    /// `POST /_emulator/scenarios/remove-app`: a person removes the app in their Facebook settings.
    /// Their grant and tokens die at Facebook (190/458 from then on), then a correctly signed
    /// deauthorize callback goes to the app's registered URL (or `url`). The removal stands whether
    /// or not the backend answers, as at Facebook, so a failed delivery is reported, not thrown.
    func removeAppScenario(_ input: ControlInput) async throws -> JSONValue {
        let subject = try await callbackSubject(input)
        let target = try callbackURL(input, kind: .deauthorize, app: subject.app)
        let timeout = try callbackTimeout(input)
        // A bare app-scoped id names nobody the emulator holds: nothing to revoke, the callback still goes.
        var removal = EmulatorState.AppRemoval(hadApp: false, tokensRevoked: 0)
        if let person = subject.person {
            removal = await state.removeApp(appID: subject.app.id, personKey: person.key)
        }
        let delivery = await deliverCallback(
            .deauthorize, app: subject.app, userID: subject.userID, to: target, timeoutMilliseconds: timeout)
        return [
            "user_id": .string(subject.userID), "removed": .bool(removal.hadApp),
            "tokens_revoked": .int(removal.tokensRevoked), "callback": delivery.json,
        ]
    }

    /// `POST /_emulator/scenarios/request-deletion`: a person asks the app to delete their data.
    /// A correctly signed data-deletion callback goes to the app's registered URL (or `url`); the
    /// answer is checked as Facebook requires (2xx, non-empty `url` and `confirmation_code`), and
    /// a valid answer's status page is fetched as the person would open it. Every shortfall is
    /// reported (`valid_response: false`, `problems`), never thrown: finding it is the point.
    func requestDeletionScenario(_ input: ControlInput) async throws -> JSONValue {
        let subject = try await callbackSubject(input)
        let target = try callbackURL(input, kind: .dataDeletion, app: subject.app)
        let timeout = try callbackTimeout(input)
        let delivery = await deliverCallback(
            .dataDeletion, app: subject.app, userID: subject.userID, to: target, timeoutMilliseconds: timeout)
        var report: [String: JSONValue] = [
            "user_id": .string(subject.userID), "callback": delivery.json, "valid_response": false,
            "confirmation_code": .null, "status_url": .null, "status_page": .null,
        ]
        switch delivery.outcome {
        case .failed(let reason):
            report["problems"] = [.string(reason)]
        case .answered(let status, let body):
            let reply = DeletionReply(status: status, body: body)
            report["valid_response"] = .bool(reply.isValid)
            report["problems"] = .array(reply.problems.map(JSONValue.string))
            report["confirmation_code"] = reply.confirmationCode.map(JSONValue.string) ?? .null
            report["status_url"] = reply.statusURL.map(JSONValue.string) ?? .null
            if reply.isValid, let url = reply.statusURL {
                report["status_page"] = await StatusPage.fetch(url, timeoutMilliseconds: timeout)
            }
        }
        return .object(report)
    }
}
