import AppStoreModels
import Foundation
import SeatLedger

/// One ledger of a ``LedgerService``: its name in the deployment, its pool, the app and
/// environment pinned in it, and what the service keeps per ledger (the token cache, the latest
/// failed write for `/readyz`, the seat endpoints' App Store Server API settings).
///
/// A ledger stays one bundle id and one environment, with its own chain, quarantine and anchor;
/// a service serves one or more of them (``LedgerDeployment``).
public final class ServedLedger: Sendable {
    /// The name requests and metrics use (`/notifications/{ledger}`, `?ledger=`, `ledger="…"`).
    public let name: String
    /// The pool every route reads and appends through.
    public let pool: LedgerPool
    /// The app the ledger records, as pinned in it.
    public let bundleId: String
    /// The environment the ledger records, as pinned in it.
    public let environment: AppStoreEnvironment
    /// Where the ledger is, for the start line (a URL without its password).
    public let location: String
    /// The seat endpoints' App Store Server API for this ledger's app.
    public let seatAPI: SeatAPISettings
    let tokens: TokenAuthenticator
    let storeFailures: StoreFailureWindow
    /// Which identifiers the ledger may know (kept by a service of several ledgers).
    let identifiers = IdentifierFilter()
    /// Its access transitions' derivers, signals and counters.
    let accessChanges = AccessChangeState()

    /// Serves `pool` as `name`; the app and environment are read from the ledger.
    public init(name: String, pool: LedgerPool, location: String, seatAPI: SeatAPISettings = SeatAPISettings(),
                notReadyAfterStoreFailure: Duration = .seconds(30)) throws {
        let pinned = try pool.blockingRead { ledger in (ledger.configuration.bundleId, ledger.configuration.environment) }
        self.name = name
        self.pool = pool
        self.bundleId = pinned.0
        self.environment = pinned.1
        self.location = location
        self.seatAPI = seatAPI
        self.tokens = TokenAuthenticator(pool: pool)
        self.storeFailures = StoreFailureWindow(holdFor: notReadyAfterStoreFailure)
    }

    /// Whether a body with these claims belongs here (a claim the body does not make matches).
    func records(_ claims: RoutingClaims) -> Bool {
        (claims.bundleId.map { $0 == bundleId } ?? true) && (claims.environment.map { $0 == environment.rawValue } ?? true)
    }

    /// The name, app and environment, as answers and `/readyz` name a ledger.
    var json: JSONValue { .object(fields) }

    /// ``json``'s members.
    var fields: [String: JSONValue] {
        ["name": .string(name), "bundleId": .string(bundleId), "environment": .string(environment.rawValue)]
    }

    /// The headers that name the ledger an answer came from.
    var answerHeaders: [(name: String, value: String)] {
        [("SeatLedger-Ledger", name), ("SeatLedger-App", "\(bundleId) \(environment.rawValue)")]
    }

    /// What a ledger name may be: the path segment of `/notifications/{ledger}` and a metric label.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        } && name.first != "."
    }
}
