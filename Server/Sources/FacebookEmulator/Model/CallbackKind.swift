/// The two platform callbacks Facebook sends to an app's backend (§9.2, §9.3), each to a URL the
/// developer enters in the app's dashboard.
enum CallbackKind: CaseIterable, Sendable {
    case deauthorize
    case dataDeletion

    /// The seed, control-API and overview field holding an app's URL for this callback.
    var settingName: String {
        switch self {
        case .deauthorize: "deauthorize_callback_url"
        case .dataDeletion: "data_deletion_callback_url"
        }
    }
}

extension EmulatorApp {
    /// The URL this app registered for `kind`, if any.
    func callbackURL(_ kind: CallbackKind) -> String? {
        switch kind {
        case .deauthorize: deauthorizeCallbackURL
        case .dataDeletion: dataDeletionCallbackURL
        }
    }

    /// Registers (or, with `nil`, removes) the app's URL for `kind`.
    mutating func setCallbackURL(_ url: String?, for kind: CallbackKind) {
        switch kind {
        case .deauthorize: deauthorizeCallbackURL = url
        case .dataDeletion: dataDeletionCallbackURL = url
        }
    }
}
