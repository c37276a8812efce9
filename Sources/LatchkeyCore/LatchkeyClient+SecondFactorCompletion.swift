import Foundation
import LatchkeyAPI

/// Completion-handler forms of the second factor's API (the seeds' Firebase snippet resolves with
/// `resolveSignIn(with:completion:)`). Handlers run on an arbitrary task; hop to the main actor in
/// UI code.
extension LatchkeyClient {
    /// ``enrollTOTP(displayName:)`` with a completion: exactly one of result and error is non-nil.
    public nonisolated func enrollTOTP(
        displayName: String? = nil, completion: @escaping @Sendable (TOTPEnrollment?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.enrollTOTP(displayName: displayName), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``verifyEnrollment(factorID:code:)`` with a completion: the recovery codes, or the error.
    public nonisolated func verifyEnrollment(
        factorID: String, code: String, completion: @escaping @Sendable ([String]?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.verifyEnrollment(factorID: factorID, code: code), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``secondFactors()`` with a completion: exactly one of result and error is non-nil.
    public nonisolated func secondFactors(completion: @escaping @Sendable (FactorsBody?, LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.secondFactors(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``removeSecondFactor(id:)`` with a completion: the error, or `nil` once removed.
    public nonisolated func removeSecondFactor(id: String, completion: @escaping @Sendable (LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                try await self.removeSecondFactor(id: id)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// ``regenerateRecoveryCodes()`` with a completion: exactly one of codes and error is non-nil.
    public nonisolated func regenerateRecoveryCodes(
        completion: @escaping @Sendable ([String]?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.regenerateRecoveryCodes(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``stepUp()`` with a completion: exactly one of resolver and error is non-nil.
    public nonisolated func stepUp(completion: @escaping @Sendable (MultiFactorResolver?, LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.stepUp(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }
}

extension MultiFactorResolver {
    /// ``resolve(code:)`` with a completion (Firebase's `resolveSignIn(with:completion:)`): exactly
    /// one of result and error is non-nil.
    public func resolve(code: String, completion: @escaping @Sendable (SignInResult?, LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.resolve(code: code), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``resolve(recoveryCode:)`` with a completion: exactly one of result and error is non-nil.
    public func resolve(
        recoveryCode: String, completion: @escaping @Sendable (SignInResult?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.resolve(recoveryCode: recoveryCode), nil)
            } catch {
                completion(nil, error)
            }
        }
    }
}
