// COMPILE-ONLY STAND-IN for Apple's AppTrackingTransparency
// (https://developer.apple.com/documentation/apptrackingtransparency/attrackingmanager): the status
// enum, the status property and the async request, with Apple's spellings, so
// Sources/Latchkey/Apple's TrackingAuthorization glue is type-checked on Linux
// (target LatchkeyAppleAdapterCheck). The status is always `notDetermined`; nothing is asked.

import Foundation

/// Apple: `class ATTrackingManager : NSObject`.
@available(iOS 14.0, macOS 11.0, tvOS 14.0, visionOS 1.0, *)
open class ATTrackingManager: NSObject {
    /// Apple: `enum AuthorizationStatus : UInt`.
    public enum AuthorizationStatus: UInt, Sendable {
        /// Apple: not asked yet.
        case notDetermined = 0
        /// Apple: restricted by the device.
        case restricted = 1
        /// Apple: the person refused.
        case denied = 2
        /// Apple: the person allowed tracking.
        case authorized = 3
    }

    /// Apple: `class var trackingAuthorizationStatus: ATTrackingManager.AuthorizationStatus { get }`.
    open class var trackingAuthorizationStatus: AuthorizationStatus { .notDetermined }

    /// Apple: `class func requestTrackingAuthorization() async -> ATTrackingManager.AuthorizationStatus`.
    open class func requestTrackingAuthorization() async -> AuthorizationStatus { .notDetermined }
}
