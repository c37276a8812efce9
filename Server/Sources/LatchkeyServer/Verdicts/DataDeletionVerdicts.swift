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

/// What a data-deletion request finds when it arrives.
package struct DeletionReceiptFacts: Sendable, Hashable {
    /// The status of the identity's newest earlier request, if any.
    package var earlier: DeletionStatus?
    /// Latchkey held the identity when the request was issued: it exists now and was first seen
    /// no later than the request's `issued_at` (a person who signed in again after asking holds a
    /// new account the request is not about).
    package var held: Bool
    /// This very request (its signature) was received before: a provider's second delivery, or a
    /// replay of a captured one.
    package var replayed: Bool

    /// Creates the facts.
    package init(earlier: DeletionStatus?, held: Bool, replayed: Bool) {
        self.earlier = earlier
        self.held = held
        self.replayed = replayed
    }
}

/// What receiving a data-deletion request does.
package enum DeletionReceipt: Sendable, Equatable {
    /// The earlier request stands: its code, its page.
    case reuse
    /// A new request, starting in this status.
    case new(DeletionStatus)
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

    /// What receiving a request under `policy` does. The same request delivered again, a request
    /// still open, and a refused one (the person reads the same page) answer the earlier one; so
    /// does one carried out, unless the person has an account again that the request was issued
    /// for. A new request waits for review under `queue` only when something is held; otherwise
    /// the jobs carry it out at once (a person Latchkey knows nothing about gets "nothing was
    /// held" without an operator).
    package static func deletionReceipt(_ policy: DeletionPolicy, _ facts: DeletionReceiptFacts) -> DeletionReceipt {
        if let earlier = facts.earlier {
            if facts.replayed { return .reuse }
            switch earlier {
            case .received, .inProgress, .refused: return .reuse
            case .done where !facts.held: return .reuse
            case .done: break
            }
        }
        return .new(policy == .queue && facts.held ? .received : .inProgress)
    }
}
