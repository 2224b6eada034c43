import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerIntake
import LedgerStorage
import SeatLedger

/// A ledger file in its own temporary directory, created with the library (`Ledger.create`).
///
/// Defaults match the project's examples: bundle `com.example.reps`, environment Sandbox, trust
/// root `Tools/pki/root.pem`. The directory (and the ledger file) disappear with the object.
///
/// ```swift
/// let test = try TestLedger()
/// let outcome = try test.ledger.append(notificationBody: Data(line.utf8))
/// try test.ledger.store.eventCount()
/// ```
final class TestLedger {
    static let bundleId = "com.example.reps"
    static let environment = AppStoreEnvironment.sandbox

    /// Holds the ledger file; also a place for inputs (`directory.write(…)`).
    let directory: TemporaryDirectory
    /// The ledger file path (pass it to the CLI as `--db`).
    let path: String
    /// The open ledger (one SQLite connection).
    private(set) var ledger: Ledger

    /// Creates `ledger.sqlite` in a new temporary directory.
    ///
    /// - Parameter roots: PEM or DER root certificate files (default: the main test root).
    init(bundleId: String = TestLedger.bundleId, environment: AppStoreEnvironment = TestLedger.environment,
         appAppleId: Int64? = nil, roots: [URL] = [TestPaths.testRoot]) throws {
        directory = try TemporaryDirectory(label: "ledger")
        path = directory.path("ledger.sqlite")
        let anchors = try roots.flatMap { try TrustAnchor.load(contentsOf: $0) }
        let configuration = try LedgerConfiguration(bundleId: bundleId, environment: environment, appAppleId: appAppleId)
        ledger = try Ledger.create(path: path, configuration: configuration, rootCertificates: anchors)
    }

    /// The ledger's event store (the long-lived connection of `ledger`).
    var store: any LedgerStore { ledger.store }

    /// A new read-only connection to the file. Use it to read what another process (the CLI)
    /// committed, independent of the long-lived connection's state.
    func freshStore() throws -> EventStore {
        try EventStore.open(at: path, readOnly: true)
    }

    /// Re-opens the file (e.g. after the CLI or another connection changed the trust roots).
    func reopen() throws {
        ledger = try Ledger.open(path: path)
    }

    /// The number of events.
    func eventCount() throws -> Int64 { try store.eventCount() }

    /// The last position and its chain hash.
    func head() throws -> (position: Int64, hash: Data) { try store.head() }

    /// Appends one NDJSON line (a notification body, a bare JWS or an `apiResponse` envelope),
    /// as the operator's own input: envelopes are applied (`acceptsAPIResponses`).
    @discardableResult
    func append(line: String, source: String = "test") throws -> MessageOutcome {
        try ledger.ingestBatch([InboundMessage(raw: Data(line.utf8), source: source, origin: .file, acceptsAPIResponses: true)]).1[0]
    }

    /// Adds root certificates to the stored configuration and re-opens the ledger so they are trusted.
    func addRoots(_ files: [URL]) throws {
        let anchors = try files.flatMap { try TrustAnchor.load(contentsOf: $0) }
        _ = try store.addRoots(anchors.map {
            StoredTrustRoot(fingerprint: $0.sha256Fingerprint, der: [UInt8]($0.der), subject: $0.subject,
                            addedAt: Timestamp.millis(Date()))
        })
        try reopen()
    }
}

/// SHA-256 fingerprint (lowercase hex of the DER) of the first certificate in a PEM/DER file.
func certificateFingerprint(_ file: URL) throws -> String {
    guard let anchor = try TrustAnchor.load(contentsOf: file).first else {
        throw TestSupportError("no certificate in \(file.path)")
    }
    return anchor.sha256Fingerprint
}

/// A failure inside a test helper, with a message saying what is missing or wrong.
struct TestSupportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
