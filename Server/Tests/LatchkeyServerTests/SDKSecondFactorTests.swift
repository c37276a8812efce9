import Foundation
import Latchkey
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import Testing

/// The SDK's second factor against the real server: the seeds' Firebase flow (sign in, get
/// `second_factor_required` with a resolver, ask for the code, resolve), enrolment, step-up, and
/// the session model's code prompt.
@Suite("SDK second factor")
struct SDKSecondFactorTests {
    @Test("enrol and verify; a sign-in throws a resolver whose code finishes it; recovery codes; wrong codes")
    func resolverFlow() async throws {
        try await Stack.run { stack in
            let phone = SDKEndToEndTests.client(stack)
            _ = try await phone.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let enrollment = try await phone.enrollTOTP(displayName: "iPhone")
            #expect(enrollment.uri.hasPrefix("otpauth://totp/Latchkey:"))
            let authenticator = try TestAuthenticator(base32: enrollment.secret, clock: stack.clock)
            let codes = try await phone.verifyEnrollment(factorID: enrollment.factorID, code: authenticator.code())
            #expect(codes.count == 10)
            let listed = try await phone.secondFactors()
            #expect(listed.factors.map(\.status) == ["active"] && listed.recoveryCodesLeft == 10)
            stack.clock.advance(30)

            // Another device signs in: the seeds' flow.
            let tablet = SDKEndToEndTests.client(stack)
            let tabletToken = try await stack.facebookToken("alice")
            let interrupted = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                _ = try await tablet.signIn(with: .accessToken(tabletToken))
            }
            #expect(interrupted?.code == .secondFactorRequired && interrupted?.category == .secondFactor)
            let resolver = try #require(interrupted?.resolver)
            #expect(resolver.purpose == .signIn)
            #expect(
                resolver.hints == [MultiFactorInfo(id: enrollment.factorID, factorID: "totp", displayName: "iPhone")])
            let waiting = await tablet.authState
            #expect(waiting != .open)
            #expect(await tablet.currentUser == nil)
            let wrong = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                _ = try await resolver.resolve(code: authenticator.wrongCode())
            }
            #expect(wrong?.code == .factorCodeInvalid)
            let result = try await resolver.resolve(code: authenticator.code())
            let phoneUser = await phone.currentUser?.id
            #expect(result.user.id == phoneUser && result.recoveryCodesLeft == nil)
            #expect(await tablet.authState == .open)
            let token = try await tablet.validAccessToken()
            let claims = try IdentityTests.claims(token)
            #expect(claims["aal"] == 2 && claims["amr"] == ["fb", "otp", "mfa"])

            // A third device with a recovery code.
            let laptop = SDKEndToEndTests.client(stack)
            let laptopToken = try await stack.facebookToken("alice")
            let again = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                _ = try await laptop.signIn(with: .accessToken(laptopToken))
            }
            let recovered = try await try #require(again?.multiFactorResolver).resolve(recoveryCode: codes[3])
            #expect(recovered.recoveryCodesLeft == 9)
        }
    }

    @Test("removing a factor from an aal-1 session throws a step-up resolver; resolving raises the same session")
    func stepUp() async throws {
        try await Stack.run { stack in
            let client = SDKEndToEndTests.client(stack)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let enrollment = try await client.enrollTOTP()
            let authenticator = try TestAuthenticator(base32: enrollment.secret, clock: stack.clock)
            try await client.verifyEnrollment(factorID: enrollment.factorID, code: authenticator.code())
            stack.clock.advance(30)
            let before = try IdentityTests.claims(try await client.validAccessToken())

            let refused = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                try await client.removeSecondFactor(id: enrollment.factorID)
            }
            #expect(refused?.code == .secondFactorRequired && refused?.httpStatus == 403)
            let resolver = try #require(refused?.resolver)
            #expect(resolver.purpose == .stepUp)
            try await resolver.resolve(code: authenticator.code())
            #expect(await client.authState == .open)
            let after = try IdentityTests.claims(try await client.validAccessToken())
            #expect(after["sid"] == before["sid"] && after["aal"] == 2 && before["aal"] == 1)
            // The raised session survives a refresh (the client holds the new refresh token).
            stack.clock.advance(1000)
            #expect(try IdentityTests.claims(try await client.validAccessToken())["aal"] == 2)
            // Past the reauthentication window, a factor change asks for the factor again.
            let stale = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                _ = try await client.regenerateRecoveryCodes()
            }
            #expect(stale?.code == .secondFactorRequired)
            stack.clock.advance(30)
            try await try #require(stale?.resolver).resolve(code: authenticator.code())
            let fresh = try await client.regenerateRecoveryCodes()
            #expect(fresh.count == 10)
            try await client.removeSecondFactor(id: enrollment.factorID)
            #expect(try await client.secondFactors().factors.isEmpty)
            let nothing = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                _ = try await client.stepUp()
            }
            #expect(nothing?.code == .secondFactorNotEnrolled)
        }
    }

    @Test("the session model: a sign-in waiting for the second factor is the button's code prompt")
    func modelPrompt() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let setup = SDKEndToEndTests.client(stack)
            _ = try await setup.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let enrollment = try await setup.enrollTOTP()
            let authenticator = try TestAuthenticator(base32: enrollment.secret, clock: stack.clock)
            try await setup.verifyEnrollment(factorID: enrollment.factorID, code: authenticator.code())
            stack.clock.advance(30)

            let model = LatchkeySessionModel(client: SDKSessionModelTests.client(stack))
            await model.restore()
            await model.signIn(SDKSessionModelTests.facebook(stack))
            #expect(model.buttonState == .secondFactor && model.lastError == nil)
            #expect(model.pendingSecondFactor?.hints.first?.id == enrollment.factorID)
            await model.resolveSecondFactor(code: authenticator.wrongCode())
            #expect(model.buttonState == .secondFactor && model.lastError?.code == .factorCodeInvalid)
            await model.resolveSecondFactor(code: authenticator.code())
            #expect(model.isSignedIn && model.buttonState == .signedIn && model.pendingSecondFactor == nil)
            await model.signOut()
            // Cancelling the prompt offers to sign in again.
            await model.signIn(SDKSessionModelTests.facebook(stack))
            #expect(model.buttonState == .secondFactor)
            model.cancelSecondFactor()
            #expect(model.buttonState == .signedOut)
        }
    }
}
