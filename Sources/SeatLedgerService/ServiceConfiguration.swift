import AppStoreModels
import Foundation
import HTTPServer
import SeatLedger

/// What `seatledger serve` runs with.
public struct ServiceConfiguration: Sendable {
    /// The HTTP listener: address, threads, connection limit and timeout, body limit.
    public var http: HTTPServerConfiguration
    /// The ledger, as given (`--db`), for the start line (a URL is logged without its password).
    public var ledgerDescription: String
    /// The clock for defaults (`asOf`, `to`, a report's `now`); `$SEATLEDGER_NOW` pins it.
    public var now: @Sendable () -> EpochMillis
    /// The longest `wait` of `GET /v1/changes`.
    public var maxChangeWait: Duration
    /// The largest page of `GET /v1/groups` and `GET /v1/changes`.
    public var maxPageSize: Int
    /// The App Store Server API of the `seats` endpoints (credentials, base URL, timeout, attempts).
    public var seatAPI: SeatAPISettings = SeatAPISettings()
    /// The support desk's listener (`--support-listen`): read-only HTML pages with no token, for
    /// an SSH tunnel or a proxy with the company's sign-in; `nil` serves no desk (``SupportDeskRoutes``).
    public var supportDesk: HTTPServerConfiguration? = nil
    /// How long `/readyz` answers 503 after a notification could not be stored (then it trusts
    /// its write probe again).
    public var notReadyAfterStoreFailure: Duration = .seconds(30)
    /// The build that serves: named by the start line, `GET /healthz` and `/metrics`
    /// (`seatledger_build_info`), so a deploy can be checked against the package it installed.
    public var build: ServiceBuild = ServiceBuild(version: SeatLedgerVersion.release, commit: "unknown")
    /// Deriving access transitions and delivering webhooks (on by default).
    public var accessChanges = AccessChangeSettings()

    /// Creates a configuration.
    public init(http: HTTPServerConfiguration, ledgerDescription: String,
                now: @escaping @Sendable () -> EpochMillis = ServiceConfiguration.environmentClock,
                maxChangeWait: Duration = ServiceConfiguration.defaultMaxChangeWait,
                maxPageSize: Int = ServiceConfiguration.defaultMaxPageSize) {
        self.http = http
        self.ledgerDescription = ledgerDescription
        self.now = now
        self.maxChangeWait = maxChangeWait
        self.maxPageSize = maxPageSize
    }

    /// The default ``maxChangeWait`` (what `serve` uses; the OpenAPI document's maximum `wait`).
    public static let defaultMaxChangeWait: Duration = .seconds(60)
    /// The default ``maxPageSize`` (what `serve` uses; the OpenAPI document's maximum `limit`).
    public static let defaultMaxPageSize = 1_000

    /// Now, or `$SEATLEDGER_NOW` (ISO 8601 or epoch ms), as the CLI reads it.
    ///
    /// Read with `getenv`, one variable: `ProcessInfo.environment` copies the whole environment
    /// into a dictionary at every call, and every read route asks this clock (the read API's
    /// target and figures: `Tools/bench/PERFORMANCE.md`).
    public static let environmentClock: @Sendable () -> EpochMillis = {
        getenv("SEATLEDGER_NOW").flatMap { Timestamp.parse(String(cString: $0)) } ?? Timestamp.millis(Date())
    }
}

/// The version and commit of the running binary.
public struct ServiceBuild: Sendable, Equatable {
    /// The release, as `seatledger --version` prints it (``SeatLedgerVersion/release``).
    public var version: String
    /// The commit the binary was built from (`unknown` when it was built outside a git checkout).
    public var commit: String

    /// Creates a build identity.
    public init(version: String, commit: String) {
        self.version = version
        self.commit = commit
    }
}
