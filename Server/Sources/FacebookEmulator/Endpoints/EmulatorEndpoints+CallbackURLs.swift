import LatchkeyAPI

extension EmulatorEndpoints {
    /// `POST /_emulator/apps/{app_id}/callbacks`: registers the app's deauthorize and
    /// data-deletion callback URLs, as a developer fills them in on the app's dashboard (either or
    /// both; an empty string removes one). The scenarios post to these URLs.
    func setCallbackURLs(_ input: ControlInput, appID: String) async throws -> JSONValue {
        var changes: [CallbackKind: String?] = [:]
        for kind in CallbackKind.allCases {
            switch try input.update(kind.settingName) {
            case .set(let url)?:
                guard WebURL.isValid(url) else {
                    throw ControlError(code: "invalid_field", "'\(kind.settingName)' must be an absolute http(s) URL")
                }
                changes[kind] = .some(url)
            case .clear?: changes[kind] = .some(nil)
            case nil: break
            }
        }
        guard !changes.isEmpty else {
            throw ControlError(
                code: "missing_field",
                "give 'deauthorize_callback_url' or 'data_deletion_callback_url' (an empty string removes it)")
        }
        guard let app = await state.setCallbackURLs(changes, appID: appID) else { throw ControlError.unknownApp(appID) }
        var answer = Self.callbackURLs(of: app)
        answer["id"] = .string(app.id)
        return .object(answer)
    }

    /// The app's callback URLs by field name, `null` when not registered: the control answer's
    /// and the overview's members.
    static func callbackURLs(of app: EmulatorApp) -> [String: JSONValue] {
        Dictionary(
            uniqueKeysWithValues: CallbackKind.allCases.map {
                ($0.settingName, app.callbackURL($0).map(JSONValue.string) ?? .null)
            })
    }
}
