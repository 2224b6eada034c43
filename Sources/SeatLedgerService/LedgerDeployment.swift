import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger

/// What a ``DeploymentFile`` names, checked against the ledgers themselves: `serve
/// --check-config` prints it, `serve --config` refuses to start unless every ledger passes.
public struct LedgerDeployment: Sendable {
    /// One ledger as found.
    public struct Finding: Sendable {
        /// The file's entry.
        public var entry: DeploymentFile.LedgerEntry
        /// Where it is, as the start line names it (a URL without its password).
        public var location: String
        /// The app pinned in it, once it could be opened.
        public var bundleId: String?
        /// The environment pinned in it.
        public var environment: String?
        /// Its last position.
        public var headPosition: Int64?
        /// Its unrevoked tokens.
        public var tokens: Int?
        /// Why it cannot be served (empty: it can).
        public var problems: [String]

        /// A finding of `entry` at `location` (a URL without its password).
        public init(entry: DeploymentFile.LedgerEntry, location: String, problems: [String]) {
            self.entry = entry
            self.location = location
            self.problems = problems
        }

        /// The finding as JSON (`serve --check-config --json`).
        public var json: JSONValue {
            ["name": .string(entry.name), "db": .string(location), "anchor": .optional(entry.anchor),
             "bundleId": .optional(bundleId), "environment": .optional(environment),
             "headPosition": headPosition.map { .int($0) } ?? .null, "tokens": tokens.map { .int(Int64($0)) } ?? .null,
             "notificationPath": .string("/notifications/\(entry.name)"),
             "problems": .array(problems.map(JSONValue.string))]
        }
    }

    /// Checked findings of `file` (``check(_:pinnedRoots:)`` makes them).
    public init(file: DeploymentFile, findings: [Finding], problems: [String]) {
        self.file = file
        self.findings = findings
        self.problems = problems
    }

    /// The file.
    public let file: DeploymentFile
    /// Each ledger, in the file's order.
    public let findings: [Finding]
    /// Problems of the deployment as a whole (two ledgers recording the same app and environment).
    public let problems: [String]

    /// Whether every ledger can be served.
    public var isServable: Bool { problems.isEmpty && findings.allSatisfy(\.problems.isEmpty) }

    /// Opens each ledger of `file` read-only and checks it: it opens, its anchor (if any) holds,
    /// it trusts no root outside `pinnedRoots` (when given), and no two ledgers record the same
    /// app and environment (a notification routed by its payload must have one place to go).
    public static func check(_ file: DeploymentFile, pinnedRoots: Set<String>? = nil) -> LedgerDeployment {
        var findings: [Finding] = []
        for entry in file.ledgers {
            var finding = Finding(entry: entry, location: StoreLocation(entry.db).description, problems: [])
            do {
                let store = try StoreLocation(entry.db).open(readOnly: true)
                let configuration = try store.configuration()
                finding.bundleId = configuration.bundleId
                finding.environment = configuration.environment.rawValue
                finding.headPosition = try store.head().position
                finding.tokens = try store.apiTokens().filter { $0.revokedAt == nil }.count
                if let pinnedRoots {
                    finding.problems += try TrustConfiguration(readingFrom: store).roots(outside: pinnedRoots).map {
                        "the ledger trusts root \($0.described), which is not a pinned root"
                    }
                }
                if let anchor = entry.anchor {
                    do {
                        if let problem = try HeadAnchor.problem(anchor, against: store) { finding.problems.append("anchor \(anchor): \(problem)") }
                    } catch {
                        finding.problems.append("anchor \(error)")
                    }
                }
            } catch {
                finding.problems.append("cannot open \(finding.location): \(error)")
            }
            findings.append(finding)
        }
        var problems: [String] = []
        var seen: [String: String] = [:]
        for finding in findings {
            guard let bundleId = finding.bundleId, let environment = finding.environment else { continue }
            let key = "\(bundleId) \(environment)"
            if let other = seen[key] {
                problems.append("ledgers \(other) and \(finding.entry.name) both record \(bundleId) in \(environment): a notification for it would have two places to go")
            }
            seen[key] = finding.entry.name
        }
        return LedgerDeployment(file: file, findings: findings, problems: problems)
    }

    /// Opens a pool on each ledger, in the file's order (check it first: ``check(_:pinnedRoots:)``).
    /// On a failure the pools already opened are closed before the error is thrown.
    public func open(readers: Int, seatAPI defaults: SeatAPISettings,
                     notReadyAfterStoreFailure: Duration = .seconds(30)) async throws -> [ServedLedger] {
        var served: [ServedLedger] = []
        for finding in findings {
            do {
                let pool = try LedgerPool.open(path: finding.entry.db, readers: readers)
                do {
                    served.append(try ServedLedger(name: finding.entry.name, pool: pool, location: finding.location,
                                                   seatAPI: Self.seatAPI(finding.entry, defaults: defaults),
                                                   notReadyAfterStoreFailure: notReadyAfterStoreFailure))
                } catch {
                    await pool.close()
                    throw error
                }
            } catch {
                for ledger in served { await ledger.pool.close() }
                throw DeploymentFileError(file: "ledger \(finding.entry.name)", message: "cannot open \(finding.location): \(error)")
            }
        }
        return served
    }

    /// The seat endpoints' settings of `entry`: its credentials and base URL, else `defaults`.
    public static func seatAPI(_ entry: DeploymentFile.LedgerEntry, defaults: SeatAPISettings) -> SeatAPISettings {
        var settings = defaults
        if let credentials = entry.credentials {
            settings.credentialsFile = credentials
            settings.issuerId = nil
            settings.keyId = nil
            settings.privateKeyFile = nil
        }
        if let base = entry.apiBaseURL { settings.baseURL = base }
        return settings
    }
}
