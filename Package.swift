// swift-tools-version:6.2
// 6.2 because hummingbird 2.28, async-http-client 1.37 and jwt-kit 5.8 declare it.

import PackageDescription

import class Foundation.ProcessInfo

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "latchkey",
    // iOS 15: what the SDK's own code needs (URLSession.data(for:)); the server is never built for
    // iOS. macOS 15: the server, which developers run on their Macs, uses Synchronization.Mutex.
    // Platforms are package-wide in SwiftPM, so a macOS app using the SDK needs macOS 15 too
    // (README, "Packaging").
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [
        // The target is LatchkeyCLI, not latchkey: on case-insensitive file systems (macOS) a module
        // named latchkey would collide with the SDK's Latchkey.
        .executable(name: "latchkey", targets: ["LatchkeyCLI"]),
        .executable(name: "latchkey-example", targets: ["LatchkeyExample"]),
        .library(name: "FacebookEmulator", targets: ["FacebookEmulator"]),
        .library(name: "Latchkey", targets: ["Latchkey"]),
        .library(name: "LatchkeyCore", targets: ["LatchkeyCore"]),
        .library(name: "LatchkeyCrypto", targets: ["LatchkeyCrypto"]),
        .library(name: "LatchkeyAPI", targets: ["LatchkeyAPI"]),
        // The server's modules (LatchkeyServer, LatchkeySQLite, LatchkeyPostgres) are no products:
        // their API is `package`, for this package's CLI, tests and benchmarks only; the server
        // ships as the `latchkey` executable.
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
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
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeyCore",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SDK apps import: LatchkeyCore plus the URLSession transport and the Apple glue.
        .target(
            name: "Latchkey",
            dependencies: ["LatchkeyCore", "LatchkeyAPI"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacebookEmulator",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeyServer",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeySQLite",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyServer",
                // Only for the SQLite it vendors (VaporCSQLite): the store calls SQLite's C API.
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL, for several server processes sharing one database.
        .target(
            name: "LatchkeyPostgres",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "LatchkeyExample",
            dependencies: ["Latchkey", "LatchkeyAPI"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "LatchkeyCLI",
            dependencies: [
                // LatchkeyCore, not Latchkey: the CLI brings AsyncHTTPClient, so the server binary
                // never loads FoundationNetworking and libcurl (docs/performance.md, memory).
                "LatchkeyCore",
                "LatchkeyAPI",
                "FacebookEmulator",
                "LatchkeyServer",
                "LatchkeySQLite",
                "LatchkeyPostgres",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
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
                "LatchkeyCrypto", "LatchkeyAPI", "TestVectors",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "FacebookEmulatorTests",
            dependencies: [
                "FacebookEmulator",
                "LatchkeyCrypto",
                "LatchkeyAPI",
                "TestVectors",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            // Tests import broadly; member-import checks would only add noise there.
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "LatchkeyServerTests",
            dependencies: [
                "Latchkey",
                "LatchkeyCLI",
                "LatchkeyServer",
                "LatchkeySQLite",
                "LatchkeyPostgres",
                "LatchkeyAPI",
                "LatchkeyCrypto",
                "FacebookEmulator",
                "TestVectors",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
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
                "Latchkey", "LatchkeyCore", "LatchkeyAPI", "LatchkeyCrypto", "TestVectors",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)

// The Apple adapter (Sources/Latchkey/Apple) compiled on every Linux build, against compile-only
// stand-ins of the Apple API it calls (Tests/AppleStandIns: Security, AuthenticationServices, SwiftUI,
// AppTrackingTransparency). The manifest is compiled for the host, so on a Mac none of this exists and
// `import Security` is Apple's. Only LatchkeyAppleAdapterCheck depends on the stand-ins; its sources
// are the adapter files themselves (Tests/LatchkeyAppleAdapterCheck/Apple links to
// Sources/Latchkey/Apple), compiled with LATCHKEY_APPLE_STAND_INS, without which the adapter's `#if`
// keeps them out on Linux: SwiftPM puts every module in one search path, so the Latchkey target could
// otherwise `canImport` a stand-in, and a Linux program must never get a fake Keychain.
#if os(Linux)
// Compile-only stand-ins of the Apple frameworks the SDK's Apple adapter calls, and the test target
// that compiles the adapter's own files (a link to Sources/Latchkey/Apple) against them. Their modules
// are named *StandIn, never Security or AuthenticationServices: SwiftPM puts every module on one
// search path, so a module named Security would flip `canImport(Security)` in every other package
// (swift-certificates then compiles its Apple-only code and fails). Only the check target maps the
// Apple names onto them, with `-module-alias` (a test target; never part of a product).
package.targets.append(contentsOf: [
    .target(name: "SecurityStandIn", path: "Tests/AppleStandIns/Security", swiftSettings: swiftSettings),
    .target(
        name: "AuthenticationServicesStandIn", path: "Tests/AppleStandIns/AuthenticationServices",
        swiftSettings: swiftSettings),
    .target(name: "SwiftUIStandIn", path: "Tests/AppleStandIns/SwiftUI", swiftSettings: swiftSettings),
    .target(
        name: "AppTrackingTransparencyStandIn", path: "Tests/AppleStandIns/AppTrackingTransparency",
        swiftSettings: swiftSettings),
    .testTarget(
        name: "LatchkeyAppleAdapterCheck",
        dependencies: [
            "LatchkeyCore", "SecurityStandIn", "AuthenticationServicesStandIn", "SwiftUIStandIn",
            "AppTrackingTransparencyStandIn",
        ],
        path: "Tests/LatchkeyAppleAdapterCheck",
        swiftSettings: swiftSettings + [
            .define("LATCHKEY_APPLE_STAND_INS"),
            .unsafeFlags([
                "-module-alias", "Security=SecurityStandIn",
                "-module-alias", "AuthenticationServices=AuthenticationServicesStandIn",
                "-module-alias", "SwiftUI=SwiftUIStandIn",
                "-module-alias", "AppTrackingTransparency=AppTrackingTransparencyStandIn",
            ]),
        ]
    ),
])
#endif

// Micro benchmarks (ordo-one/benchmark) build only when asked for, so `swift test` never resolves
// or compiles them: `LATCHKEY_BENCHMARKS=1 swift package benchmark` (see docs/performance.md).
if ProcessInfo.processInfo.environment["LATCHKEY_BENCHMARKS"] == "1" {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]))
    package.targets.append(
        .executableTarget(
            name: "LatchkeyMicro",
            dependencies: [
                "LatchkeyServer", "LatchkeySQLite", "LatchkeyAPI",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Benchmarks/LatchkeyMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]))
}
