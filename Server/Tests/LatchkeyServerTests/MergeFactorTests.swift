import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import Testing

/// A merge keeps second factors (`Verdicts.mergeFactors`): no identity signs in with fewer factors
/// after a merge than before. Over HTTP on the test database (SQLite; PostgreSQL in its pass).
/// About 2 s.
@Suite("Second factor: merges keep factors")
struct MergeFactorTests {
    /// Bob (who has a factor) links Alice's credential: the conflict's ticket, and the credential.
    static func conflict(_ stack: Stack, bobBearer: String) async throws -> (ticket: String, alice: String) {
        let alice = try await stack.facebookToken("alice")
        let answer = try await stack.send(
            .post, "/v1/users/me/identities", bearer: bobBearer, json: ["accessToken": .string(alice)])
        #expect(answer.errorCode == "identity_already_linked", "\(String(buffer: answer.body))")
        return (try #require(try answer.json()["error"]?["linkTicket"]?.stringValue), alice)
    }

    @Test("only the merged account has a factor: its factor and unused codes move, its identities stay held")
    func factorsMove() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let alice = try await IdentityTests.signIn(stack, "alice")
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            let bob = try await IdentityTests.signIn(stack, "bob")
            let bobBearer = try IdentityTests.bearer(bob)
            let enrolled = try await SecondFactorTests.enroll(stack, bearer: bobBearer)
            // A pending factor of Bob's goes with his account.
            _ = try await stack.send(.post, "/v1/users/me/factors", bearer: bobBearer, json: ["type": "totp"])
            // One code used before the merge stays used.
            let usedHeld = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
            let used = try await SecondFactorTests.complete(
                stack, try SecondFactorTests.challenge(of: usedHeld), recoveryCode: enrolled.recoveryCodes[0])
            #expect(used.status == .ok)
            let (ticket, aliceCredential) = try await Self.conflict(
                stack, bobBearer: try IdentityTests.bearer(try used.json()))
            let owner = try await stack.signIn(["accessToken": .string(aliceCredential)]).json()
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: try IdentityTests.bearer(owner),
                json: ["linkTicket": .string(ticket)])
            #expect(merged.status == .ok, "\(String(buffer: merged.body))")
            // Bob's identity lands on Alice's account, still held for his authenticator.
            let held = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
            let challenge = try SecondFactorTests.challenge(of: held)
            stack.clock.advance(30)
            let passed = try await SecondFactorTests.complete(stack, challenge, code: enrolled.authenticator.code())
            #expect(passed.status == .ok, "\(String(buffer: passed.body))")
            #expect(try passed.json()["user"]?["id"]?.stringValue == aliceID)
            // Alice's own identity now needs it too.
            let aliceHeld = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            // A recovery code of Bob's (hashed for his old id) opens it; the used one does not.
            let aliceChallenge = try SecondFactorTests.challenge(of: aliceHeld)
            let reused = try await SecondFactorTests.complete(
                stack, aliceChallenge, recoveryCode: enrolled.recoveryCodes[0])
            #expect(reused.errorCode == "factor_code_invalid")
            let recovered = try await SecondFactorTests.complete(
                stack, aliceChallenge, recoveryCode: enrolled.recoveryCodes[1])
            #expect(recovered.status == .ok, "\(String(buffer: recovered.body))")
            #expect(try recovered.json()["recoveryCodesLeft"] == 8)
            let listed = try await stack.get(
                "/v1/users/me/factors", bearer: try IdentityTests.bearer(try recovered.json())
            )
            .json()
            #expect(listed["factors"]?.arrayValue?.map { $0["status"] } == ["active"], "the pending one is gone")
            let event = try await stack.store.auditEvents(userID: aliceID, limit: 50).first {
                $0.event.type == .userMerged
            }
            #expect(event?.event.detail["factors_moved"] == 1)
        }
    }

    @Test("a linker with a factor gets a ticket only from a session that proved it: an aal-1 one steps up")
    func linkerProvesItsFactor() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            _ = try await IdentityTests.signIn(stack, "alice")
            // Bob enrols in a session that stays aal 1 (a thief's copy of it, say).
            let bob = try await IdentityTests.signIn(stack, "bob")
            let bobBearer = try IdentityTests.bearer(bob)
            let enrolled = try await SecondFactorTests.enroll(stack, bearer: bobBearer)
            let refused = try await stack.send(
                .post, "/v1/users/me/identities", bearer: bobBearer,
                json: ["accessToken": .string(try await stack.facebookToken("alice"))])
            let challenge = try SecondFactorTests.challenge(of: refused, status: .forbidden)
            #expect(try refused.json()["error"]?["linkTicket"] == nil, "no ticket")
            stack.clock.advance(30)
            let raised = try await SecondFactorTests.complete(stack, challenge, code: enrolled.authenticator.code())
            let strong = try #require(try raised.json()["access_token"]?.stringValue)
            _ = try await Self.conflict(stack, bobBearer: strong)
        }
    }

    @Test("both have factors: an aal-1 caller steps up first, then the caller's factors protect the account")
    func bothHaveFactors() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            // Alice enrols in a session that stays aal 1.
            let alice = try await IdentityTests.signIn(stack, "alice")
            let aliceBearer = try IdentityTests.bearer(alice)
            let aliceFactor = try await SecondFactorTests.enroll(stack, bearer: aliceBearer, name: "Alice's")
            let bob = try await IdentityTests.signIn(stack, "bob")
            let bobFactor = try await SecondFactorTests.enroll(stack, bearer: try IdentityTests.bearer(bob))
            let bobHeld = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
            let bobStrong = try await SecondFactorTests.complete(
                stack, try SecondFactorTests.challenge(of: bobHeld), code: bobFactor.authenticator.code())
            let (ticket, _) = try await Self.conflict(stack, bobBearer: try IdentityTests.bearer(try bobStrong.json()))
            let refused = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: aliceBearer, json: ["linkTicket": .string(ticket)])
            let challenge = try SecondFactorTests.challenge(of: refused, status: .forbidden)
            // Nothing happened: Bob's account is still his own.
            #expect(
                try await stack.get("/v1/users/me", bearer: try IdentityTests.bearer(try bobStrong.json())).status
                    == .ok)
            stack.clock.advance(30)
            let raised = try await SecondFactorTests.complete(stack, challenge, code: aliceFactor.authenticator.code())
            let strong = try #require(try raised.json()["access_token"]?.stringValue)
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: strong, json: ["linkTicket": .string(ticket)])
            #expect(merged.status == .ok, "\(String(buffer: merged.body))")
            // Bob's identity is held for Alice's factor; his own no longer passes.
            stack.clock.advance(30)
            let held = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
            let heldChallenge = try SecondFactorTests.challenge(of: held)
            #expect(
                try await SecondFactorTests.complete(stack, heldChallenge, code: bobFactor.authenticator.code())
                    .errorCode == "factor_code_invalid")
            #expect(
                try await SecondFactorTests.complete(stack, heldChallenge, code: aliceFactor.authenticator.code())
                    .status == .ok)
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            let event = try await stack.store.auditEvents(userID: aliceID, limit: 50).first {
                $0.event.type == .userMerged
            }
            #expect(event?.event.detail["factors_dropped"] == 1)
        }
    }
}
