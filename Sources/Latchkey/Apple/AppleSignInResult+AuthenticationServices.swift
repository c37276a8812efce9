// What the two Sign in with Apple adapters (AppleSignInPresenter over ASAuthorizationController, and
// LatchkeyAppleSignInButton over SwiftUI's SignInWithAppleButton) share: Apple's answer in the
// core's terms, and the core's scopes in Apple's. Compiled as EasyLoginPresenter.swift says.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AuthenticationServices
import Foundation
import LatchkeyCore

extension AppleSignInResult {
    /// What an authorization ended with, in the core's terms: the Apple ID credential, a cancel
    /// (`ASAuthorizationError.canceled`), or any other error as it is (the core keeps it as the
    /// underlying error of `apple_login_failed`).
    /// - Throws: the authorization's error; `apple_login_failed` for an authorization that is not
    ///   an Apple ID one, or whose identity token or authorization code is missing or not text.
    init(_ outcome: Result<ASAuthorization, any Error>) throws {
        switch outcome {
        case .failure(let error):
            if let error = error as? ASAuthorizationError, error.code == .canceled {
                self = .cancelled
                return
            }
            throw error
        case .success(let authorization):
            guard let apple = authorization.credential as? ASAuthorizationAppleIDCredential else {
                throw LatchkeyError(
                    code: .appleLoginFailed, message: "The authorization did not give an Apple ID credential.")
            }
            self = .authorized(try AppleIDCredential(apple))
        }
    }
}

extension AppleIDCredential {
    /// The credential's tokens as text (Apple hands them over as UTF-8 bytes), with the name parts
    /// Apple shares at the first authorization only.
    init(_ apple: ASAuthorizationAppleIDCredential) throws(LatchkeyError) {
        guard let identityToken = apple.identityToken.flatMap({ String(data: $0, encoding: .utf8) }),
            let authorizationCode = apple.authorizationCode.flatMap({ String(data: $0, encoding: .utf8) })
        else {
            throw LatchkeyError(
                code: .appleLoginFailed,
                message: "Sign in with Apple gave back no identity token or authorization code.")
        }
        self.init(
            identityToken: identityToken, authorizationCode: authorizationCode, user: apple.user,
            givenName: apple.fullName?.givenName, familyName: apple.fullName?.familyName, email: apple.email)
    }
}

extension Set where Element == AppleScope {
    /// The same scopes in Apple's terms, in a fixed order (a set has none).
    var authorizationScopes: [ASAuthorization.Scope] {
        AppleScope.allCases.filter(contains).map { scope in
            switch scope {
            case .fullName: return .fullName
            case .email: return .email
            }
        }
    }
}
#endif
