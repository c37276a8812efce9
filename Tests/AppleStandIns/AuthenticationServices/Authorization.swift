// COMPILE-ONLY STAND-IN for Apple's AuthenticationServices framework, Sign in with Apple: it mirrors
// https://developer.apple.com/documentation/authenticationservices/asauthorizationcontroller (init(authorizationRequests:),
// delegate, presentationContextProvider, performRequests(), cancel()),
// .../asauthorizationcontrollerdelegate, .../asauthorizationcontrollerpresentationcontextproviding,
// .../asauthorizationappleidprovider (createRequest()), .../asauthorizationopenidrequest (requestedScopes,
// nonce, state), .../asauthorizationappleidrequest, .../asauthorization (provider, credential, Scope),
// .../asauthorizationappleidcredential (user, identityToken, authorizationCode, fullName, email) and
// .../asauthorizationerror-swift.struct (Code and its raw values).
//
// As the web authentication stand-in beside it, it declares with Apple's spellings, signatures,
// isolation and availability only what Sources/Latchkey/Apple uses (AppleSignInPresenter, the
// Sign in with Apple button), so they are type-checked on every Linux build. Apple's classes also
// adopt NSCopying and NSSecureCoding, which the adapter never uses; they are left out. Nothing is
// shown: performRequests() ends every request as the person cancelling it.

import Foundation

/// Apple: `class ASAuthorization : NSObject`; the encapsulation of a successful authorization.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorization: NSObject {
    /// Apple: `struct Scope`, the kinds of contact information that can be requested.
    public struct Scope: Hashable, RawRepresentable, Sendable {
        /// Apple: the scope's string value.
        public let rawValue: String
        /// Apple: `init(rawValue: String)`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Apple: `init(_ rawValue: String)`.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// Apple: a scope that includes the user's full name (the raw value here is the stand-in's).
        public static let fullName = Scope(rawValue: "full_name")
        /// Apple: a scope that includes the user's email address.
        public static let email = Scope(rawValue: "email")
    }

    /// Apple: `var provider: any ASAuthorizationProvider { get }`.
    open private(set) var provider: any ASAuthorizationProvider
    /// Apple: `var credential: any ASAuthorizationCredential { get }`.
    open private(set) var credential: any ASAuthorizationCredential

    /// Stand-in only (Apple's is made by the system): lets a test hand the adapter an authorization.
    public init(provider: any ASAuthorizationProvider, credential: any ASAuthorizationCredential) {
        self.provider = provider
        self.credential = credential
        super.init()
    }
}

/// Apple: `protocol ASAuthorizationProvider : NSObjectProtocol`; what creates requests.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
public protocol ASAuthorizationProvider: NSObjectProtocol {}

/// Apple: `protocol ASAuthorizationCredential : NSCopying, NSSecureCoding, NSObjectProtocol`.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
public protocol ASAuthorizationCredential: NSObjectProtocol {}

/// Apple: `class ASAuthorizationRequest : NSObject`; created by providers only.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorizationRequest: NSObject {
    /// Apple: `var provider: any ASAuthorizationProvider { get }`.
    open private(set) var provider: any ASAuthorizationProvider

    init(provider: any ASAuthorizationProvider) {
        self.provider = provider
        super.init()
    }
}

/// Apple: `class ASAuthorizationOpenIDRequest : ASAuthorizationRequest`.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorizationOpenIDRequest: ASAuthorizationRequest {
    /// Apple: `var requestedScopes: [ASAuthorization.Scope]? { get set }`.
    open var requestedScopes: [ASAuthorization.Scope]?
    /// Apple: `var state: String? { get set }`.
    open var state: String?
    /// Apple: `var nonce: String? { get set }`; copied into the id token's `nonce` claim.
    open var nonce: String?
}

/// Apple: `class ASAuthorizationAppleIDRequest : ASAuthorizationOpenIDRequest`.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorizationAppleIDRequest: ASAuthorizationOpenIDRequest {
    /// Apple: `var user: String? { get set }`.
    open var user: String?
}

/// Apple: `class ASAuthorizationAppleIDProvider : NSObject, ASAuthorizationProvider`.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorizationAppleIDProvider: NSObject, ASAuthorizationProvider {
    /// Apple: `init()`.
    public override init() { super.init() }
    /// Apple: `func createRequest() -> ASAuthorizationAppleIDRequest`.
    open func createRequest() -> ASAuthorizationAppleIDRequest { ASAuthorizationAppleIDRequest(provider: self) }
}

/// Apple: `class ASAuthorizationAppleIDCredential : NSObject, ASAuthorizationCredential`.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorizationAppleIDCredential: NSObject, ASAuthorizationCredential {
    /// Apple: `var user: String { get }`.
    open private(set) var user: String
    /// Apple: `var identityToken: Data? { get }`.
    open private(set) var identityToken: Data?
    /// Apple: `var authorizationCode: Data? { get }`.
    open private(set) var authorizationCode: Data?
    /// Apple: `var fullName: PersonNameComponents? { get }`.
    open private(set) var fullName: PersonNameComponents?
    /// Apple: `var email: String? { get }`.
    open private(set) var email: String?

    /// Stand-in only (Apple marks `init()` unavailable; the system makes credentials).
    public init(
        user: String, identityToken: Data?, authorizationCode: Data?, fullName: PersonNameComponents? = nil,
        email: String? = nil
    ) {
        self.user = user
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.fullName = fullName
        self.email = email
        super.init()
    }
}

/// Apple: `@MainActor protocol ASAuthorizationControllerDelegate : NSObjectProtocol`. Apple's two
/// methods are `optional`; Linux has no Objective-C optional requirements, and a default
/// implementation would let a misspelled witness compile and never be called, so here they are
/// required: stricter than Apple, never looser.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
@MainActor
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    /// Apple: `optional func authorizationController(controller: ASAuthorizationController,
    /// didCompleteWithAuthorization authorization: ASAuthorization)`.
    func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    /// Apple: `optional func authorizationController(controller: ASAuthorizationController,
    /// didCompleteWithError error: any Error)`.
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

/// Apple: `@MainActor protocol ASAuthorizationControllerPresentationContextProviding : NSObjectProtocol`.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@MainActor
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    /// Apple: tells the delegate from which window it should present content to the user.
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}

/// Apple: `class ASAuthorizationController : NSObject`; runs authorization requests.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
open class ASAuthorizationController: NSObject {
    /// Apple: `var authorizationRequests: [ASAuthorizationRequest] { get }`.
    open private(set) var authorizationRequests: [ASAuthorizationRequest]
    /// Apple: `weak var delegate: (any ASAuthorizationControllerDelegate)? { get set }`.
    open weak var delegate: (any ASAuthorizationControllerDelegate)?
    /// Apple: `weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)? { get set }`.
    @available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
    open weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)?

    /// Apple: `init(authorizationRequests: [ASAuthorizationRequest])`.
    public init(authorizationRequests: [ASAuthorizationRequest]) {
        self.authorizationRequests = authorizationRequests
        super.init()
    }

    /// Apple: `func performRequests()`. The stand-in shows nothing: it tells the delegate at once
    /// that the person cancelled, as Apple does when the sheet is closed. Main-actor isolated here
    /// (Apple's is not annotated) because the stand-in calls the main-actor delegate synchronously;
    /// the adapter calls it from the main actor, as it must to present anything.
    @MainActor
    open func performRequests() {
        delegate?.authorizationController(controller: self, didCompleteWithError: ASAuthorizationError(.canceled))
    }

    /// Apple: `func cancel()`; cancels any active authorization requests.
    @available(iOS 16.0, macOS 13.0, macCatalyst 16.0, tvOS 18.0, visionOS 1.0, *)
    open func cancel() {}
}

/// Apple: `struct ASAuthorizationError`, the Swift face of the `NSError`s with domain
/// `ASAuthorizationErrorDomain` that the delegate receives.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, watchOS 6.0, visionOS 1.0, *)
public struct ASAuthorizationError: CustomNSError, Hashable, Error {
    /// Apple: `enum Code : Int`; the codes authorization errors can have.
    public enum Code: Int, Sendable, Equatable {
        /// Apple: the authorization attempt failed for an unknown reason.
        case unknown = 1000
        /// Apple: the user canceled the authorization attempt.
        case canceled = 1001
        /// Apple: the authorization request received an invalid response.
        case invalidResponse = 1002
        /// Apple: the authorization request wasn't handled.
        case notHandled = 1003
        /// Apple: the authorization attempt failed.
        case failed = 1004
        /// Apple: the authorization request isn't interactive.
        case notInteractive = 1005
    }

    /// Apple: the error's code (from the bridged `NSError`).
    public let code: Code

    /// Apple: creates an error with `code`.
    public init(_ code: Code) { self.code = code }

    /// Apple: the error domain, `ASAuthorizationErrorDomain`.
    public static var errorDomain: String { "com.apple.AuthenticationServices.AuthorizationError" }

    /// Apple: the `NSError` code, `code.rawValue`.
    public var errorCode: Int { code.rawValue }

    /// Apple: the authorization attempt failed for an unknown reason.
    public static var unknown: Code { .unknown }
    /// Apple: the user canceled the authorization attempt.
    public static var canceled: Code { .canceled }
    /// Apple: the authorization request received an invalid response.
    public static var invalidResponse: Code { .invalidResponse }
    /// Apple: the authorization request wasn't handled.
    public static var notHandled: Code { .notHandled }
    /// Apple: the authorization attempt failed.
    public static var failed: Code { .failed }
}
