// swift-tools-version:6.0
// The SwiftUI sample app of Getting Started: the login button, the profile picture, Easy Login
// and the app's lifecycle, over the SDK at the repository's root. Open this folder in Xcode (or
// `swift run` on a Mac) with `swift run --package-path Server latchkey serve --dev` running: the
// Debug configuration signs in against it. CI compiles the sources in App/ on Linux against the
// SwiftUI stand-ins (target LatchkeyAppleAdapterCheck in the root package).

import PackageDescription

let package = Package(
    name: "LatchkeySample",
    platforms: [.iOS(.v17), .macOS(.v14)],
    dependencies: [.package(name: "latchkey", path: "../..")],
    targets: [
        .executableTarget(
            name: "LatchkeySample",
            dependencies: [.product(name: "Latchkey", package: "latchkey")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
