import Foundation
import LatchkeyServer
import Testing

/// An authenticator app in tests: the TOTP codes of an enrolled secret, at the stack's clock (the
/// server's own RFC 6238 code, which `SecondFactorVectorTests` holds to the RFC's vectors). Not
/// the SDK's: apps get their codes from the person's authenticator.
struct TestAuthenticator: Sendable {
    let secret: Data
    let clock: TestClock

    /// The authenticator for the base32 secret an enrolment answered.
    init(base32 secret: String, clock: TestClock) throws {
        self.secret = try #require(Base32.decode(secret))
        self.clock = clock
    }

    /// The code shown now, or `steps` steps of 30 s away.
    func code(steps: Int64 = 0) -> String {
        TOTP.code(secret: secret, step: TOTP.step(at: clock.now) + steps)
    }

    /// A 6-digit code that is none of the codes the server accepts now (±`skew` steps).
    func wrongCode(skew: Int64 = 1) -> String {
        let accepted = Set((-skew...skew).map { code(steps: $0) })
        return (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first { !accepted.contains($0) } ?? "000000"
    }
}
