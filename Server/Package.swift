// swift-tools-version:6.2
// 6.2 because hummingbird 2.28 and async-http-client 1.37 declare it.
//
// The server, the Facebook emulator and the `latchkey` CLI. The SDK is the package at the
// repository's root, which this one depends on by path: apps add the repository and get the SDK
// alone (its manifest is tools 6.0, its only dependency swift-crypto).

import PackageDescription

import class Foundation.ProcessInfo

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Products of the SDK's package (the repository's root).
func sdk(_ names: String...) -> [Target.Dependency] { names.map { .product(name: $0, package: "latchkey") } }

let package = Package(
    name: "latchkey-server",
    // macOS 15: the server, which developers run on their Macs, uses Synchronization.Mutex. Never
    // built for iOS; the SDK's platforms are the root package's.
    platforms: [.macOS(.v15)],
    products: [
        // The target is LatchkeyCLI, not latchkey: on case-insensitive file systems (macOS) a module
        // named latchkey would collide with the SDK's Latchkey.
        .executable(name: "latchkey", targets: ["LatchkeyCLI"]),
        .executable(name: "latchkey-example", targets: ["LatchkeyExample"]),
        .library(name: "FacebookEmulator", targets: ["FacebookEmulator"]),
        // The server's modules (LatchkeyServer, LatchkeySQLite, LatchkeyPostgres) are no products:
        // their API is `package`, for this package's CLI, tests and benchmarks only; the server
        // ships as the `latchkey` executable.
    ],
    dependencies: [
        // The SDK and the modules it shares with the server (the repository's root).
        .package(name: "latchkey", path: ".."),
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
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        .target(
            name: "FacebookEmulator",
            dependencies: sdk("LatchkeyAPI", "LatchkeyShared", "LatchkeyCrypto") + [
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
            dependencies: sdk("LatchkeyAPI", "LatchkeyShared", "LatchkeyCrypto") + [
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
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeySQLite",
            dependencies: sdk("LatchkeyAPI", "LatchkeyShared") + [
                "LatchkeyServer",
                // Only for the SQLite it vendors (VaporCSQLite): the store calls SQLite's C API.
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL, for several server processes sharing one database.
        .target(
            name: "LatchkeyPostgres",
            dependencies: sdk("LatchkeyAPI", "LatchkeyShared") + [
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
            dependencies: sdk("Latchkey", "LatchkeyAPI"),
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "LatchkeyCLI",
            // LatchkeyCore, not Latchkey: the CLI brings AsyncHTTPClient, so the server binary
            // never loads FoundationNetworking and libcurl (docs/performance.md, memory).
            dependencies: sdk("LatchkeyCore", "LatchkeyAPI", "LatchkeyShared") + [
                "FacebookEmulator",
                "LatchkeyServer",
                "LatchkeySQLite",
                "LatchkeyPostgres",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
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
        // The shared test vectors (the root's Tests/Vectors, through links), read the same way
        // as the SDK's tests read them.
        .target(
            name: "ServerTestVectors",
            dependencies: sdk("LatchkeyAPI"),
            path: "Tests/ServerTestVectors",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "FacebookEmulatorTests",
            dependencies: sdk("LatchkeyCrypto", "LatchkeyAPI", "LatchkeyShared") + [
                "FacebookEmulator",
                "ServerTestVectors",
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
            dependencies: sdk("Latchkey", "LatchkeyAPI", "LatchkeyShared", "LatchkeyCrypto") + [
                "LatchkeyCLI",
                "LatchkeyServer",
                "LatchkeySQLite",
                "LatchkeyPostgres",
                "FacebookEmulator",
                "ServerTestVectors",
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
    ]
)

// Micro benchmarks (ordo-one/benchmark) build only when asked for, so `swift test` never resolves
// or compiles them: `LATCHKEY_BENCHMARKS=1 swift package benchmark` (see docs/performance.md).
if ProcessInfo.processInfo.environment["LATCHKEY_BENCHMARKS"] == "1" {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]))
    package.targets.append(
        .executableTarget(
            name: "LatchkeyMicro",
            dependencies: sdk("LatchkeyAPI") + [
                "LatchkeyServer", "LatchkeySQLite", .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Benchmarks/LatchkeyMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]))
}
