/// The event types of Sign in with Apple's server-to-server notifications ("Processing changes for
/// Sign in with Apple accounts").
enum AppleEventType: String, Sendable, CaseIterable {
    /// The person stopped using Sign in with Apple with the team's apps; their tokens end.
    case consentRevoked = "consent-revoked"
    /// The person deleted their Apple Account (the spelling community code and captures use).
    case accountDelete = "account-delete"
    /// The same, as Apple's current documentation spells it; servers should accept both.
    case accountDeleted = "account-deleted"
    /// The person stopped Hide My Email forwarding.
    case emailDisabled = "email-disabled"
    /// The person resumed Hide My Email forwarding.
    case emailEnabled = "email-enabled"

    /// Whether Apple ends the authorization and its tokens with this event.
    var endsAuthorization: Bool { self == .consentRevoked || self == .accountDelete || self == .accountDeleted }

    /// Whether the event carries `email` and `is_private_email`.
    var carriesEmail: Bool { self == .emailDisabled || self == .emailEnabled }
}
