// The seed's FBProfilePictureView in SwiftUI: the URL comes from LatchkeySessionModel.pictureURL
// (tested on Linux); this file only draws it. Compiled as LatchkeyLoginButton.swift says.
#if canImport(SwiftUI) && canImport(Observation) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import Foundation
import LatchkeyCore
import SwiftUI

/// The signed-in user's picture (the Facebook SDK's `FBProfilePictureView`), a silhouette without
/// one; size it with `.frame`, round it with `.clipShape(Circle())`.
@available(iOS 15.0, macOS 12.0, visionOS 1.0, *)
public struct LatchkeyProfilePicture: View {
    /// How the picture fills its frame (`FBProfilePictureCropping`).
    public enum Cropping: Sendable {
        /// Filled and cropped to a square.
        case square
        /// Whole, at its own aspect ratio.
        case original
    }

    @ObservedObject private var session: LatchkeySessionModel
    private let property: String
    private let cropping: Cropping

    /// The picture of `session`'s user, from the user property `property` (Latchkey's default
    /// fields mapping stores Facebook's picture URL as `picture`).
    public init(session: LatchkeySessionModel, property: String = "picture", cropping: Cropping = .square) {
        _session = ObservedObject(wrappedValue: session)
        self.property = property
        self.cropping = cropping
    }

    /// The picture.
    public var body: some View {
        AsyncImage(url: session.pictureURL(property: property)) { image in
            if cropping == .square {
                // A square the frame fits, filled by the picture and cropped to it (not stretched).
                Color.clear.aspectRatio(1, contentMode: .fit).overlay { image.resizable().scaledToFill() }.clipped()
            } else {
                image.resizable().scaledToFit()
            }
        } placeholder: {
            Image(systemName: "person.crop.square.fill").resizable().scaledToFit()
        }
        .accessibilityLabel(Text(session.user?.string("name") ?? LatchkeyString.profilePicture.localized))
    }
}
#endif
