import Foundation
import LatchkeyAPI

/// Completion-handler forms of the async API, for older code (the seeds' `response:`/`error:` style).
/// Handlers run on an arbitrary task; hop to the main actor in UI code.
extension LatchkeyClient {
    /// Backendless's `loginWithFacebook(accessToken:fieldsMapping:response:error:)`.
    public nonisolated func loginWithFacebook(
        accessToken: String, fieldsMapping: [String: String]? = nil,
        response: @escaping @Sendable (LatchkeyUser) -> Void, error: @escaping @Sendable (LatchkeyError) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                response(try await self.loginWithFacebook(accessToken: accessToken, fieldsMapping: fieldsMapping))
            } catch let failure {
                error(failure)
            }
        }
    }

    /// Firebase's `signIn(with:completion:)`: exactly one of result and error is non-nil.
    public nonisolated func signIn(
        with credential: FacebookCredential, fieldsMapping: [String: String]? = nil,
        completion: @escaping @Sendable (SignInResult?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.signIn(with: credential, fieldsMapping: fieldsMapping), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``signInWithApple(using:scopes:)`` with a completion: exactly one of result and error is non-nil.
    public nonisolated func signInWithApple(
        using provider: some AppleSignInProvider, scopes: Set<AppleScope> = [.fullName, .email],
        completion: @escaping @Sendable (SignInResult?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.signInWithApple(using: provider, scopes: scopes), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``signIn(with:rawNonce:)`` with a completion: exactly one of result and error is non-nil.
    public nonisolated func signIn(
        with credential: AppleIDCredential, rawNonce: String,
        completion: @escaping @Sendable (SignInResult?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.signIn(with: credential, rawNonce: rawNonce), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// `handleOpenURL(_:)` with Backendless's `response:`/`error:` handlers.
    public nonisolated func handleOpenURL(
        _ url: URL, response: @escaping @Sendable (LatchkeyUser) -> Void,
        error: @escaping @Sendable (LatchkeyError) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                response(try await self.handleOpenURL(url))
            } catch let failure {
                error(failure)
            }
        }
    }

    /// `signOut()` with a completion.
    public nonisolated func signOut(completion: @escaping @Sendable () -> Void) {
        Task {
            await self.signOut()
            completion()
        }
    }

    /// ``signInAnonymously()`` with a completion: exactly one of result and error is non-nil.
    public nonisolated func signInAnonymously(completion: @escaping @Sendable (SignInResult?, LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.signInAnonymously(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Firebase's `link(with:completion:)`: exactly one of user and error is non-nil; a conflict's
    /// error carries ``LatchkeyError/linkTicket``.
    public nonisolated func link(
        with credential: FacebookCredential, fieldsMapping: [String: String]? = nil,
        completion: @escaping @Sendable (LatchkeyUser?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.link(with: credential, fieldsMapping: fieldsMapping), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``link(with:)`` with a completion: exactly one of user and error is non-nil; a conflict's
    /// error carries ``LatchkeyError/linkTicket``.
    public nonisolated func link(
        with credential: LinkCredential, completion: @escaping @Sendable (LatchkeyUser?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.link(with: credential), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``linkWithApple(using:scopes:)`` with a completion: exactly one of user and error is non-nil.
    public nonisolated func linkWithApple(
        using provider: some AppleSignInProvider, scopes: Set<AppleScope> = [.fullName, .email],
        completion: @escaping @Sendable (LatchkeyUser?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.linkWithApple(using: provider, scopes: scopes), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``unlink(provider:subject:)`` with a completion.
    public nonisolated func unlink(
        provider: String = "facebook", subject: String,
        completion: @escaping @Sendable (LatchkeyUser?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.unlink(provider: provider, subject: subject), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``completeLink(ticket:)`` with a completion.
    public nonisolated func completeLink(
        ticket: String, completion: @escaping @Sendable (LinkCompletion?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.completeLink(ticket: ticket), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``deleteAccount()`` with a completion: `nil` once deleted.
    public nonisolated func deleteAccount(completion: @escaping @Sendable (LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                try await self.deleteAccount()
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }
}

extension LatchkeyClient {
    /// ``activeSessions()`` with a completion.
    public nonisolated func activeSessions(
        completion: @escaping @Sendable ([ActiveSessionBody]?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.activeSessions(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// ``endSession(id:)`` with a completion: `nil` once ended.
    public nonisolated func endSession(id: String, completion: @escaping @Sendable (LatchkeyError?) -> Void) {
        Task {
            do throws(LatchkeyError) {
                try await self.endSession(id: id)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// ``securityEvents(cursor:limit:)`` with a completion.
    public nonisolated func securityEvents(
        cursor: String? = nil, limit: Int = 20,
        completion: @escaping @Sendable (SecurityEventsBody?, LatchkeyError?) -> Void
    ) {
        Task {
            do throws(LatchkeyError) {
                completion(try await self.securityEvents(cursor: cursor, limit: limit), nil)
            } catch {
                completion(nil, error)
            }
        }
    }
}
