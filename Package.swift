// swift-tools-version:6.0
// 6.0 (Xcode 16): the oldest manifest format with Swift 6 language mode, so apps on Xcode 16 can add
// the SDK. The server, the emulator and the CLI are a package of their own in Server/, which
// depends on this one by path: an app that adds this repository resolves swift-crypto and nothing of
// the server's graph (README, "Install").

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Where swift-crypto's `_CryptoExtras` (RSA, and so BoringSSL linked into the app) is used: RS256
/// goes through Security's `SecKey` on Apple platforms (`RSAPublicKey`).
let nonApple: [Platform] = [.linux, .android, .windows, .wasi, .openbsd]

let package = Package(
    name: "latchkey",
    // The SDK's words for people are English first, translated in LatchkeyCore's String Catalog.
    defaultLocalization: "en",
    // What the SDK's own code needs (URLSession.data(for:) and async/await); newer APIs (the
    // Observation-based session model, SwiftUI's web authentication) carry their own availability.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        // What apps depend on: `import Latchkey`.
        .library(name: "Latchkey", targets: ["Latchkey"]),
        // The SDK without the URLSession transport and the Apple glue, for other transports.
        .library(name: "LatchkeyCore", targets: ["LatchkeyCore"]),
        // The wire types shared by the SDK and the server (re-exported by Latchkey).
        .library(name: "LatchkeyAPI", targets: ["LatchkeyAPI"]),
        // The JOSE and Facebook primitives, shared with the server and the emulator.
        .library(name: "LatchkeyCrypto", targets: ["LatchkeyCrypto"]),
        // Encodings and comparisons the SDK, the server and the emulator share. A product only so
        // the server's package (Server/) can use them; Latchkey does not re-export it.
        .library(name: "LatchkeyShared", targets: ["LatchkeyShared"]),
    ],
    dependencies: [
        // 3.x as well: swift-crypto 4 declares tools 6.1, which Xcode 16.0 to 16.2 cannot read.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0")
    ],
    targets: [
        .target(
            name: "LatchkeyShared",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeyAPI",
            swiftSettings: swiftSettings
        ),
        // The Facebook and JOSE primitives (JWS, JWKs, Limited Login claim checks, PKCE,
        // appsecret_proof, signed_request, random tokens), written once for the server, the SDK and
        // the emulator.
        .target(
            name: "LatchkeyCrypto",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyShared",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(platforms: nonApple)),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeyCore",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyCrypto",
                "LatchkeyShared",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The String Catalog: Xcode compiles it into the bundle's .lproj tables; SwiftPM on
            // other platforms copies it as it is, and LatchkeyStrings reads it there.
            resources: [.process("Localizable.xcstrings")],
            swiftSettings: swiftSettings
        ),
        // The SDK apps import: LatchkeyCore plus the URLSession transport and the Apple glue.
        .target(
            name: "Latchkey",
            dependencies: ["LatchkeyCore", "LatchkeyAPI"],
            // Apple asks SDKs for a privacy manifest at their bundle's root: what the SDK collects
            // (the person's id, name and email, for the app's own server), no tracking, and no
            // required-reason API (LatchkeyTests holds the declaration to the sources).
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
        // The shared test vectors (Tests/Vectors), read the same way by every test target.
        .target(
            name: "TestVectors",
            dependencies: ["LatchkeyAPI"],
            path: "Tests/TestVectors",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "LatchkeyCryptoTests",
            dependencies: [
                "LatchkeyCrypto", "LatchkeyAPI", "LatchkeyShared", "TestVectors",
                .product(name: "Crypto", package: "swift-crypto"),
                // Tests may sign with BoringSSL's RSA everywhere; no app builds them.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The SDK exactly as an app imports it: `import Latchkey` alone, member-import checks on.
        .testTarget(
            name: "LatchkeySurfaceTests",
            dependencies: ["Latchkey"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LatchkeyTests",
            dependencies: [
                "Latchkey", "LatchkeyCore", "LatchkeyAPI", "LatchkeyCrypto", "LatchkeyShared", "TestVectors",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)

// The Apple adapter (Sources/Latchkey/Apple) and the Apple half of RS256
// (Sources/LatchkeyCrypto/Apple) compiled on every Linux build, against compile-only stand-ins of the
// Apple API they call (Tests/AppleStandIns: Security, AuthenticationServices, SwiftUI,
// AppTrackingTransparency, UIKit). The manifest is compiled for the host, so on a Mac none of this exists
// and `import Security` is Apple's. Only LatchkeyAppleAdapterCheck depends on the stand-ins; its
// sources are the adapter files themselves (links under Tests/LatchkeyAppleAdapterCheck), compiled
// with LATCHKEY_APPLE_STAND_INS, without which the files' `#if` keeps them out on Linux: SwiftPM puts
// every module in one search path, so the Latchkey target could otherwise `canImport` a stand-in, and
// a Linux program must never get a fake Keychain. The stand-ins' modules are named *StandIn, never
// Security or AuthenticationServices, for the same reason (swift-certificates would compile its
// Apple-only code and fail); only the check target maps the Apple names onto them, with
// `-module-alias` (a test target; never part of a product).
#if os(Linux)
package.targets.append(contentsOf: [
    .target(name: "SecurityStandIn", path: "Tests/AppleStandIns/Security", swiftSettings: swiftSettings),
    .target(
        name: "AuthenticationServicesStandIn", dependencies: ["SwiftUIStandIn"],
        path: "Tests/AppleStandIns/AuthenticationServices", swiftSettings: swiftSettings),
    .target(name: "SwiftUIStandIn", path: "Tests/AppleStandIns/SwiftUI", swiftSettings: swiftSettings),
    .target(
        name: "AppTrackingTransparencyStandIn", path: "Tests/AppleStandIns/AppTrackingTransparency",
        swiftSettings: swiftSettings),
    .target(name: "UIKitStandIn", path: "Tests/AppleStandIns/UIKit", swiftSettings: swiftSettings),
    .testTarget(
        name: "LatchkeyAppleAdapterCheck",
        dependencies: [
            "Latchkey", "LatchkeyCore", "LatchkeyShared", "SecurityStandIn", "AuthenticationServicesStandIn",
            "SwiftUIStandIn",
            "AppTrackingTransparencyStandIn", "UIKitStandIn",
        ],
        path: "Tests/LatchkeyAppleAdapterCheck",
        swiftSettings: swiftSettings + [
            .define("LATCHKEY_APPLE_STAND_INS"),
            .unsafeFlags([
                "-module-alias", "Security=SecurityStandIn",
                "-module-alias", "AuthenticationServices=AuthenticationServicesStandIn",
                "-module-alias", "SwiftUI=SwiftUIStandIn",
                "-module-alias", "AppTrackingTransparency=AppTrackingTransparencyStandIn",
                "-module-alias", "UIKit=UIKitStandIn",
            ]),
        ]
    ),
])
#endif
