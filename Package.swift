// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SeatLedger",
    products: [
        // The core an embedder picks: the ledger on SQLite, projections, reports. Links SQLite and
        // OpenSSL only (no libpq, hiredis or HTTP server): see the packaging test.
        .library(name: "SeatLedger", targets: ["SeatLedger", "LedgerIntake", "EventStore", "LedgerStorage", "Projections", "Reports", "AppStoreModels",
                                               "LedgerEvents", "JWSVerification"]),
        // Optional engines and sources, each its own product so the core never links their C libraries.
        .library(name: "SeatLedgerPostgres", targets: ["PostgresStore"]),
        .library(name: "SeatLedgerRedis", targets: ["SeatLedgerRedis", "RedisStreams"]),
        .library(name: "SeatLedgerAppStoreAPI", targets: ["SeatLedgerAppStoreAPI", "AppStoreAPI"]),
        .library(name: "JWSSigning", targets: ["JWSSigning"]),
        // `seatledger serve`: its own products, so an embedder of "SeatLedger" never links libmicrohttpd.
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "SeatLedgerService", targets: ["SeatLedgerService"]),
        .executable(name: "seatledger", targets: ["seatledger"]),
        .executable(name: "seatledger-sim", targets: ["seatledger-sim"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // No pkgConfig: Debian's hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a warning
        // on every build; the header is <hiredis/hiredis.h> under /usr/include and the modulemap links it.
        .systemLibrary(name: "CHiredis", path: "Sources/CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "JWSVerification", "LedgerConcurrency"]),
        // The support desk's pages: pure HTML rendering of reports (no HTTP, no I/O); served by SeatLedgerService.
        .target(name: "SupportDesk", dependencies: ["Reports", "Projections", "AppStoreModels"]),
        .target(name: "SeatLedgerService", dependencies: ["HTTPServer", "SupportDesk", "SeatLedger", "SeatLedgerAppStoreAPI", "WebhookDelivery", "StandardWebhooks", "Reports", "Projections", "LedgerStorage", "AppStoreModels", "JWSVerification", "LedgerConcurrency"]),
        .target(name: "PostgresClient", dependencies: ["CLibPQ"], exclude: ["README.md"]),
        .target(name: "PostgresStore", dependencies: ["PostgresClient", "LedgerStorage", "AppStoreModels", "LedgerEvents", "JWSVerification"], exclude: ["README.md"]),
        .target(name: "AppStoreModels"),
        .target(name: "LedgerConcurrency"),
        .target(name: "RedisStreams", dependencies: ["CHiredis"]),
        .target(name: "JWSVerification", dependencies: ["COpenSSL", "AppStoreModels"]),
        .target(name: "JWSSigning", dependencies: ["COpenSSL", "AppStoreModels"]),
        // Standard Webhooks signing and verification for outgoing webhooks (issue #47); no product yet.
        .target(name: "StandardWebhooks", dependencies: ["COpenSSL"]),
        .target(name: "AppStoreAPI", dependencies: ["AppStoreModels", "JWSSigning"]),
        // Outgoing webhooks (issue #47): endpoint URLs, the retry schedule, one signed delivery; no product yet.
        .target(name: "WebhookDelivery", dependencies: ["StandardWebhooks", "AppStoreAPI"]),
        .target(name: "LedgerEvents", dependencies: ["AppStoreModels"]),
        .target(name: "LedgerStorage", dependencies: ["AppStoreModels", "LedgerEvents", "JWSVerification"]),
        .target(name: "EventStore", dependencies: ["CSQLite", "LedgerConcurrency", "LedgerStorage", "AppStoreModels", "LedgerEvents", "JWSVerification"]),
        .target(name: "Projections", dependencies: ["AppStoreModels", "LedgerEvents"]),
        // The intake: decode, verify, inbound messages and rejections, line and spool reading; no store.
        .target(name: "LedgerIntake", dependencies: ["AppStoreModels", "LedgerEvents", "JWSVerification", "LedgerStorage", "Projections", "Reports", "LedgerConcurrency"]),
        .target(name: "SeatLedger", dependencies: ["AppStoreModels", "LedgerEvents", "JWSVerification", "EventStore", "LedgerStorage", "LedgerIntake", "Projections", "Reports", "LedgerConcurrency"]),
        .target(name: "SeatLedgerRedis", dependencies: ["SeatLedger", "LedgerEvents", "RedisStreams", "JWSVerification"]),
        .target(name: "SeatLedgerAppStoreAPI", dependencies: ["SeatLedger", "AppStoreModels", "LedgerEvents", "LedgerStorage", "Projections", "Reports", "AppStoreAPI"]),
        // The demo's sample streams and test root, compiled into the binary (see ARCHITECTURE.md).
        .target(name: "DemoSamples", plugins: ["EmbedSamples"]),
        .executableTarget(name: "sample-embedder", path: "Tools/sample-embedder"),
        .plugin(name: "EmbedSamples", capability: .buildTool(), dependencies: ["sample-embedder"], path: "Tools/plugins/EmbedSamples"),
        .target(name: "Reports", dependencies: ["AppStoreModels", "LedgerEvents", "Projections"]),
        .executableTarget(name: "seatledger", dependencies: ["SeatLedger", "PostgresStore", "SeatLedgerRedis", "SeatLedgerAppStoreAPI", "DemoSamples", "SeatLedgerService", "WebhookDelivery", "StandardWebhooks", "HTTPServer", "Reports", "RedisStreams", "AppStoreAPI"],
                          plugins: ["BuildCommit"]),
        // The commit the binary was built from, for --version, serve's start line, /healthz and /metrics.
        .plugin(name: "BuildCommit", capability: .buildTool(), path: "Tools/plugins/BuildCommit"),
        .target(name: "GroupSimulator", dependencies: ["AppStoreModels", "JWSSigning", "JWSVerification", "LedgerConcurrency"], path: "Tools/GroupSimulator"),
        .executableTarget(name: "seatledger-sim", dependencies: ["GroupSimulator"], path: "Tools/seatledger-sim"),
        .executableTarget(name: "seatledger-bench", dependencies: ["SeatLedger", "EventStore", "LedgerStorage", "JWSVerification", "GroupSimulator", "AppStoreModels", "LedgerEvents", "CSQLite"], path: "Tools/bench/Sources/seatledger-bench"),
        .target(name: "PostgresTestSupport", dependencies: ["PostgresClient"], path: "Tests/PostgresTestSupport"),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "PostgresTestSupport", "GroupSimulator"]),
        .target(name: "LedgerStoreConformance", dependencies: ["LedgerStorage", "AppStoreModels", "LedgerEvents", "JWSVerification", "Projections"], path: "Tests/LedgerStoreConformance"),
        .testTarget(name: "LedgerStorageTests", dependencies: ["LedgerStorage", "LedgerStoreConformance", "AppStoreModels", "LedgerEvents"]),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "LedgerStorage", "LedgerStoreConformance"]),
        .testTarget(name: "PostgresStoreTests", dependencies: ["PostgresStore", "LedgerStoreConformance", "EventStore", "LedgerStorage", "PostgresClient", "PostgresTestSupport", "GroupSimulator", "LedgerEvents", "AppStoreModels",
                                                                 "SeatLedger", "Projections", "ProjectionTestSupport", "JWSVerification"]),
        .testTarget(name: "PackagingTests"),
        .testTarget(name: "AppStoreModelsTests", dependencies: ["AppStoreModels"]),
        .target(name: "ProjectionTestSupport", dependencies: ["AppStoreModels", "LedgerEvents", "Projections"], path: "Tests/ProjectionTestSupport"),
        .testTarget(name: "ProjectionsTests", dependencies: ["Projections", "AppStoreModels", "LedgerEvents", "ProjectionTestSupport"]),
        .testTarget(name: "ReportsTests", dependencies: ["Reports", "Projections", "AppStoreModels", "ProjectionTestSupport"]),
        .testTarget(name: "RedisStreamsTests", dependencies: ["RedisStreams"]),
        .target(name: "HTTPTestSupport", path: "Tests/HTTPTestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPTestSupport", "JWSVerification"]),
        .testTarget(name: "SeatLedgerServiceTests", dependencies: ["SeatLedgerService", "SupportDesk", "HTTPTestSupport", "StandardWebhooks", "HTTPServer", "SeatLedger", "EventStore", "LedgerStorage", "AppStoreModels", "JWSSigning", "JWSVerification", "PostgresClient", "PostgresTestSupport", "PostgresStore"]),
        .testTarget(name: "LedgerConcurrencyTests", dependencies: ["LedgerConcurrency"]),
        .testTarget(name: "GroupSimulatorTests", dependencies: ["GroupSimulator", "AppStoreModels", "JWSVerification", "JWSSigning"]),
        .testTarget(name: "StandardWebhooksTests", dependencies: ["StandardWebhooks", "HTTPTestSupport"], exclude: ["reference_receiver.py"]),
        .testTarget(name: "WebhookDeliveryTests", dependencies: ["WebhookDelivery", "StandardWebhooks", "AppStoreAPI", "HTTPTestSupport"]),
        .testTarget(name: "JWSVerificationTests", dependencies: ["JWSVerification", "JWSSigning", "AppStoreModels"]),
        // The command line's own parts (the option kit, help, completions), tested in process.
        .testTarget(name: "SeatLedgerCLITests", dependencies: ["seatledger"]),
        .testTarget(name: "SeatLedgerTests", dependencies: ["SeatLedger", "JWSSigning", "EventStore", "LedgerStorage", "Projections", "AppStoreModels", "LedgerEvents", "JWSVerification", "CSQLite", "GroupSimulator", "Reports", "AppStoreAPI", "PostgresClient", "PostgresTestSupport", "RedisStreams",
                                                           "PostgresStore", "SeatLedgerAppStoreAPI", "DemoSamples", "HTTPTestSupport", "ProjectionTestSupport", "StandardWebhooks"], exclude: ["Golden/files"]),
    ],
    swiftLanguageModes: [.v6]
)
