/// What a provider's data-deletion request finds when it arrives, and when the jobs carry it out.
package struct DataDeletionFacts: Sendable, Hashable {
    /// The identity is linked to a user now.
    package var identityKnown: Bool
    /// How many identities that user has, this one included.
    package var identities: Int

    /// Creates the facts.
    package init(identityKnown: Bool, identities: Int) {
        self.identityKnown = identityKnown
        self.identities = identities
    }
}

/// What carrying out a data-deletion request does.
package enum DataDeletionVerdict: Sendable, Equatable {
    /// Not in progress (carried out already, refused, or waiting for review): nothing, so a job
    /// that runs again after a crash changes nothing.
    case skip
    /// Nobody has the identity: the request is done, and its page says nothing was held.
    case nothingHeld
    /// The identity goes, with the properties its provider wrote.
    case removeIdentity
    /// The user goes, as an account deletion (the identity was their only way in).
    case deleteUser

    /// What `deletion.done` says was done (`detail.outcome`).
    package var outcome: String {
        switch self {
        case .skip, .nothingHeld: "nothing_held"
        case .removeIdentity: "identity_removed"
        case .deleteUser: "user_deleted"
        }
    }
}

/// Whether a data-deletion request answers with an earlier request's confirmation code.
package enum DeletionRepeatVerdict: Sendable, Equatable {
    /// The earlier request stands: its code, its page.
    case reuse
    /// A new request, with a new code.
    case new
}

extension Verdicts {
    /// What carrying out a request under `policy` does, in `status`. `delete` (and an approved
    /// `queue`) takes the user when the identity was their only way in: a user left with no way
    /// to sign in could never be reached again. `unlink` never takes the user.
    package static func dataDeletion(
        _ policy: DeletionPolicy, status: DeletionStatus, _ facts: DataDeletionFacts
    ) -> DataDeletionVerdict {
        guard status == .inProgress else { return .skip }
        guard facts.identityKnown else { return .nothingHeld }
        switch policy {
        case .delete, .queue: return facts.identities <= 1 ? .deleteUser : .removeIdentity
        case .unlink: return .removeIdentity
        }
    }

    /// Whether a request for an identity repeats `earlier`, the newest one for it: a request
    /// still open, or refused, stands (the person reads the same page); one carried out stands
    /// unless the identity is held again since (the person signed in again: new data to delete).
    package static func deletionRepeat(
        earlier: DeletionStatus?, identityKnown: Bool
    ) -> DeletionRepeatVerdict {
        switch earlier {
        case nil: .new
        case .received?, .inProgress?, .refused?: .reuse
        case .done?: identityKnown ? .new : .reuse
        }
    }
}
