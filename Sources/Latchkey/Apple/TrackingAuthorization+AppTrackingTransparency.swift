// App Tracking Transparency's answer as the core's TrackingAuthorization, which decides between
// classic login and Limited Login (tested on Linux). Compiled as EasyLoginPresenter.swift says, with
// the AppTrackingTransparency stand-in on Linux.
#if canImport(AppTrackingTransparency) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AppTrackingTransparency
import LatchkeyCore

extension TrackingAuthorization {
    /// The core's value for ATT's status.
    public init(_ status: ATTrackingManager.AuthorizationStatus) {
        switch status {
        case .authorized: self = .authorized
        case .denied: self = .denied
        case .restricted: self = .restricted
        default: self = .notDetermined  // notDetermined, and any status a later system adds
        }
    }

    /// The status now, without asking: what a sign-in should use when the app asked earlier (or
    /// chose not to ask, and so signs in with Limited Login).
    public static var current: TrackingAuthorization {
        TrackingAuthorization(ATTrackingManager.trackingAuthorizationStatus)
    }

    /// Asks the person (the system asks once; later calls return the answer). Needs
    /// `NSUserTrackingUsageDescription` in Info.plist, and an app that is active.
    @MainActor
    public static func request() async -> TrackingAuthorization {
        TrackingAuthorization(await ATTrackingManager.requestTrackingAuthorization())
    }
}
#endif
