import Foundation
import LatchkeyAPI

/// What one person has granted one app: Facebook keeps permissions per user and app, not per token,
/// so `/me/permissions`, `debug_token`'s `scopes` and field gating all read this record.
struct Grant: Sendable, Equatable {
    var granted: Set<String>
    var declined: Set<String>
    var installedAt: Date

    /// `public_profile` is always part of a grant, as on Facebook.
    init(granted: Set<String>, declined: Set<String> = [], installedAt: Date) {
        self.granted = granted.union(["public_profile"]).subtracting(["openid"])
        self.declined = declined.subtracting(self.granted)
        self.installedAt = installedAt
    }

    /// Adds newly granted and declined permissions; a permission granted now is no longer declined.
    mutating func merge(granted newGranted: Set<String>, declined newDeclined: Set<String>) {
        granted.formUnion(newGranted.subtracting(["openid"]))
        declined.formUnion(newDeclined)
        declined.subtract(newGranted)
        granted.subtract(newDeclined)
        granted.insert("public_profile")
    }
}
