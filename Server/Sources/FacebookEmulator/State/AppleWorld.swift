import Foundation

/// Everything Apple's side of the emulator remembers, held inside `EmulatorState` so Apple and
/// Facebook share one clock and one consistent world.
struct AppleWorld: Sendable {
    let registration: AppleRegistration
    /// Apple's published RSA keys, separate from Facebook's; the first signs.
    var keys: [SigningKey]
    /// A key Apple never publishes, for the `wrong_key` defect; made on first use, since most runs
    /// never need one and an RSA key takes a moment to generate.
    var unpublishedKey: SigningKey?
    /// Standing authorizations by person key.
    var consents: [String: AppleConsent] = [:]
    var nextConsentID = 1
    var codes: [String: AppleCode] = [:]
    var tokens: [String: AppleToken] = [:]
    /// Token values in issue order, so listings are stable.
    var tokenOrder: [String] = []

    /// The Apple `sub` of a person for this team.
    func subject(_ personKey: String) -> String {
        AppleIdentity.subject(teamID: registration.teamID, personKey: personKey)
    }

    mutating func store(_ token: AppleToken) {
        tokens[token.token] = token
        tokenOrder.append(token.token)
    }

    /// Marks every live token of a person revoked; returns how many were.
    @discardableResult
    mutating func revokeTokens(personKey: String, at now: Date, by cause: String) -> Int {
        var count = 0
        for value in tokenOrder where tokens[value]?.personKey == personKey && tokens[value]?.isLive(at: now) == true {
            tokens[value]?.revokedAt = now
            tokens[value]?.revokedBy = cause
            count += 1
        }
        return count
    }
}
