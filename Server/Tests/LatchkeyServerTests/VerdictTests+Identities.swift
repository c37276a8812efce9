import Foundation
import Testing

@testable import LatchkeyServer

/// The identity verdicts' truth tables: linking, unlinking, merging and deleting.
extension VerdictTests {
    /// Every combination of link facts (2⁶ × 3 owners).
    static let allLinkFacts: [LinkFacts] = [false, true].flatMap { jti in
        [false, true].flatMap { nonce in
            [false, true].flatMap { exists in
                [false, true].flatMap { disabled in
                    [false, true].flatMap { anonymous in
                        [false, true].flatMap { recent in
                            LinkFacts.Owner.allCases.map {
                                LinkFacts(
                                    jtiSpent: jti, nonceInvalid: nonce, userExists: exists, userDisabled: disabled,
                                    owner: $0, anonymous: anonymous, sessionRecent: recent)
                            }
                        }
                    }
                }
            }
        }
    }

    @Test("a link: the request's refusals, then the caller's account, and only then whose the identity is")
    func link() {
        #expect(Self.allLinkFacts.count == 192)
        for facts in Self.allLinkFacts {
            let expected: LinkVerdict =
                facts.jtiSpent
                ? .refuse(.replayed)
                : facts.nonceInvalid
                    ? .refuse(.nonceInvalid)
                    : !facts.userExists
                        ? .refuse(.sessionEnded)
                        : facts.userDisabled
                            ? .refuse(.userDisabled)
                            : facts.owner != .caller && !facts.anonymous && !facts.sessionRecent
                                ? .refuse(.reauthenticationRequired)
                                : [.nobody: .link, .caller: .touch, .another: .conflict][facts.owner]!
            #expect(Verdicts.link(facts) == expected, "\(facts)")
        }
        // The rows a reader checks first.
        #expect(Verdicts.link(LinkFacts()) == .link)
        #expect(Verdicts.link(LinkFacts(owner: .another)) == .conflict)
        #expect(Verdicts.link(LinkFacts(jtiSpent: true, owner: .another)) == .refuse(.replayed))
        #expect(Verdicts.link(LinkFacts(userDisabled: true, owner: .another)) == .refuse(.userDisabled))
        // A stale session adds nothing and gets no ticket; re-proving its own identity is allowed
        // (that is the fresh sign-in), and a guest has nothing to sign in with.
        #expect(Verdicts.link(LinkFacts(owner: .another, sessionRecent: false)) == .refuse(.reauthenticationRequired))
        #expect(Verdicts.link(LinkFacts(owner: .caller, sessionRecent: false)) == .touch)
        #expect(Verdicts.link(LinkFacts(owner: .nobody, anonymous: true, sessionRecent: false)) == .link)
        // The same person's identity in another app of the business is another account's: a new
        // identity is that conflict; one the caller has, or that another owns, is as before; and
        // the refusals still come first.
        #expect(Verdicts.link(LinkFacts(businessOwner: .another)) == .businessConflict)
        #expect(Verdicts.link(LinkFacts(businessOwner: .caller)) == .link)
        #expect(Verdicts.link(LinkFacts(owner: .caller, businessOwner: .another)) == .touch)
        #expect(Verdicts.link(LinkFacts(owner: .another, businessOwner: .another)) == .conflict)
        #expect(
            Verdicts.link(LinkFacts(sessionRecent: false, businessOwner: .another))
                == .refuse(.reauthenticationRequired))
        #expect(Verdicts.link(LinkFacts(jtiSpent: true, businessOwner: .another)) == .refuse(.replayed))
        #expect(Verdicts.link(LinkFacts(anonymous: true, businessOwner: .another)) == .businessConflict)
    }

    static let unlinkTable: [(UnlinkFacts, IdentityRefusal?)] = [
        (UnlinkFacts(identities: 2), nil),
        (UnlinkFacts(identities: 5), nil),
        (UnlinkFacts(identities: 1), .lastSignInMethod),
        (UnlinkFacts(linked: false, identities: 1), .notLinked),
        (UnlinkFacts(linked: false, identities: 0), .notLinked),
        (UnlinkFacts(linked: false, identities: 3), .notLinked),
        (UnlinkFacts(userExists: false, linked: false, identities: 0), .sessionEnded),
        (UnlinkFacts(identities: 2, sessionRecent: false), .reauthenticationRequired),
        (UnlinkFacts(linked: false, identities: 1, sessionRecent: false), .reauthenticationRequired),
        (UnlinkFacts(userExists: false, sessionRecent: false), .sessionEnded),
    ]

    @Test("an unlink: never the last identity", arguments: unlinkTable)
    func unlink(facts: UnlinkFacts, expected: IdentityRefusal?) {
        #expect(Verdicts.unlink(facts) == expected, "\(facts)")
    }

    @Test("a merge: every way a ticket stops describing the accounts is one refusal")
    func merge() {
        for spent in [false, true] {
            for exists in [false, true] {
                for disabled in [false, true] {
                    for owns in [false, true] {
                        for same in [false, true] {
                            for recent in [false, true] {
                                let facts = MergeFacts(
                                    ticketSpent: spent, sourceExists: exists, sourceDisabled: disabled,
                                    targetOwnsIdentity: owns, sameUser: same, targetRecent: recent)
                                let invalid = spent || !exists || !owns || same
                                let expected: IdentityRefusal? =
                                    invalid
                                    ? .ticketInvalid
                                    : disabled ? .userDisabled : recent ? nil : .reauthenticationRequired
                                #expect(Verdicts.merge(facts) == expected, "\(facts)")
                            }
                        }
                    }
                }
            }
        }
    }

    static let deletionTable: [(DeletionFacts, IdentityRefusal?)] = [
        (DeletionFacts(secondsSinceSignIn: 0, window: 600), nil),
        (DeletionFacts(secondsSinceSignIn: 600, window: 600), nil),
        (DeletionFacts(secondsSinceSignIn: 600.5, window: 600), .reauthenticationRequired),
        (DeletionFacts(anonymous: true, secondsSinceSignIn: 1e9, window: 600), nil),
        (DeletionFacts(secondsSinceSignIn: .nan, window: 600), .reauthenticationRequired),
        (DeletionFacts(sessionActive: false, secondsSinceSignIn: 0), .sessionEnded),
        (DeletionFacts(sessionActive: false, anonymous: true), .sessionEnded),
    ]

    @Test("a deletion: an active session that signed in within the window, or a guest's", arguments: deletionTable)
    func deletion(facts: DeletionFacts, expected: IdentityRefusal?) {
        #expect(Verdicts.deletion(facts) == expected, "\(facts)")
    }
}
