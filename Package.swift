// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SeatLedger",
    products: [
        .library(name: "SeatLedger", targets: ["SeatLedger"]),
        .library(name: "JWSSigning", targets: ["JWSSigning"]),
        .executable(name: "seatledger", targets: ["seatledger"]),
        .executable(name: "seatledger-sim", targets: ["seatledger-sim"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CHiredis", path: "Sources/CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "PostgresClient", dependencies: ["CLibPQ"], exclude: ["README.md"]),
        .target(name: "PostgresStore", dependencies: ["PostgresClient", "EventStore", "AppStoreModels", "LedgerEvents", "JWSVerification"], exclude: ["README.md"]),
        .target(name: "AppStoreModels"),
        .target(name: "LedgerConcurrency"),
        .target(name: "RedisStreams", dependencies: ["CHiredis"]),
        .target(name: "JWSVerification", dependencies: ["COpenSSL", "AppStoreModels"]),
        .target(name: "JWSSigning", dependencies: ["COpenSSL", "AppStoreModels"]),
        .target(name: "AppStoreAPI", dependencies: ["AppStoreModels", "JWSSigning"]),
        .target(name: "LedgerEvents", dependencies: ["AppStoreModels"]),
        .target(name: "EventStore", dependencies: ["CSQLite", "AppStoreModels", "LedgerEvents", "JWSVerification"]),
        .target(name: "Projections", dependencies: ["AppStoreModels", "LedgerEvents"]),
        .target(name: "SeatLedger", dependencies: ["AppStoreModels", "LedgerEvents", "JWSVerification", "EventStore", "PostgresStore", "Projections", "Reports", "RedisStreams", "AppStoreAPI", "LedgerConcurrency"]),
        .target(name: "Reports", dependencies: ["AppStoreModels", "LedgerEvents", "Projections"]),
        .executableTarget(name: "seatledger", dependencies: ["SeatLedger", "Reports", "RedisStreams", "AppStoreAPI"]),
        .target(name: "GroupSimulator", dependencies: ["AppStoreModels", "JWSSigning", "JWSVerification"]),
        .executableTarget(name: "seatledger-sim", dependencies: ["GroupSimulator"], path: "Tools/seatledger-sim"),
        .executableTarget(name: "seatledger-bench", dependencies: ["SeatLedger", "EventStore", "Projections", "JWSVerification", "JWSSigning", "GroupSimulator", "AppStoreModels", "LedgerEvents", "CSQLite"], path: "Tools/bench/Sources/seatledger-bench"),
        .target(name: "PostgresTestSupport", dependencies: ["PostgresClient"], path: "Tests/PostgresTestSupport"),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "PostgresTestSupport", "GroupSimulator"]),
        .testTarget(name: "PostgresStoreTests", dependencies: ["PostgresStore", "EventStore", "PostgresClient", "PostgresTestSupport", "GroupSimulator", "Projections", "LedgerEvents", "AppStoreModels", "JWSVerification"]),
        .testTarget(name: "LedgerConcurrencyTests", dependencies: ["LedgerConcurrency"]),
        .testTarget(name: "GroupSimulatorTests", dependencies: ["GroupSimulator", "AppStoreModels", "JWSVerification", "JWSSigning"]),
        .testTarget(name: "JWSVerificationTests", dependencies: ["JWSVerification", "JWSSigning", "AppStoreModels"]),
        .testTarget(name: "SeatLedgerTests", dependencies: ["SeatLedger", "JWSSigning", "EventStore", "Projections", "AppStoreModels", "LedgerEvents", "JWSVerification", "CSQLite", "GroupSimulator", "Reports", "AppStoreAPI", "PostgresClient", "PostgresTestSupport", "RedisStreams"], exclude: ["Golden/files"]),
    ],
    swiftLanguageModes: [.v6]
)
