import AppStoreModels
import Foundation
import Testing

/// Apple's own signed samples through `seatledger check`, with the results listed in
/// `../shared/fixtures/apple-test-vectors/README.md`.
@Suite("Apple's test vectors through `seatledger check`")
struct AppleTestVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let file: String
        let kind: String
        /// `nil`: must verify.
        let expectedCode: String?
        var testDescription: String { "\(file) (\(kind)) → \(expectedCode ?? "verifies")" }
    }

    static let vectors: [Vector] = [
        Vector(file: "testNotification", kind: "notification", expectedCode: nil),
        Vector(file: "wrongBundleId", kind: "notification", expectedCode: "bundle_mismatch"),
        Vector(file: "missingX5CHeaderClaim", kind: "notification", expectedCode: "missing_x5c"),
        Vector(file: "legacyTransaction", kind: "notification", expectedCode: "not_jws"),
        Vector(file: "transactionInfo", kind: "transaction", expectedCode: nil),
        Vector(file: "renewalInfo", kind: "renewal", expectedCode: nil),
    ]

    static func trustingTestCA() -> [String] {
        ["--root-cert", TestPaths.appleTestCA.path, "--bundle-id", "com.example", "--environment", "Sandbox"]
    }

    @Test("each vector gives the documented result", arguments: vectors)
    func vector(_ vector: Vector) throws {
        let file = TestPaths.appleSignedSample(vector.file)
        try #require(FileManager.default.fileExists(atPath: file.path), "missing shared fixture \(file.path)")
        let result = try CLI.run(["check", file.path, "--kind", vector.kind, "--json"] + Self.trustingTestCA())
        #expect(result.exitCode == (vector.expectedCode == nil ? 0 : 1), "\(result)")
        let item = try #require(try result.json().arrayValue?.first)
        if let code = vector.expectedCode {
            #expect(item["verified"] == false)
            #expect(item["errorCode"]?.stringValue == code, "\(item.canonicalString())")
        } else {
            #expect(item["verified"] == true, "\(item.canonicalString())")
        }
    }

    @Test("testNotification decodes to the documented payload")
    func testNotificationPayload() throws {
        let result = try CLI.run(["check", TestPaths.appleSignedSample("testNotification").path, "--json"] + Self.trustingTestCA())
        #expect(result.exitCode == 0, "\(result)")
        let notification = try #require(try result.json().arrayValue?.first?["payload"]?["notification"])
        #expect(notification["notificationType"] == "TEST")
        #expect(notification["notificationUUID"] == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification["signedDate"] == 1_681_314_324_000)
        #expect(notification["data"]?["bundleId"] == "com.example")
        #expect(notification["data"]?["appAppleId"] == 1234)
    }

    @Test("several files in one run: exit 1 when any is refused, one result per file in order")
    func severalFiles() throws {
        let names = ["testNotification", "wrongBundleId", "legacyTransaction"]
        let result = try CLI.run(["check"] + names.map { TestPaths.appleSignedSample($0).path } + ["--json"] + Self.trustingTestCA())
        #expect(result.exitCode == 1, "\(result)")
        let items = try #require(try result.json().arrayValue)
        #expect(items.map { $0["verified"] } == [true, false, false])
        #expect(items.map { $0["file"]?.stringValue } == names.map { TestPaths.appleSignedSample($0).path })
    }

    @Test("with Apple Root CA - G3 as the only root, testNotification is chain_not_trusted")
    func productionRootDoesNotTrustTestCA() throws {
        let result = try CLI.run(["check", TestPaths.appleSignedSample("testNotification").path, "--json",
                                  "--root-cert", TestPaths.appleRootG3.path, "--bundle-id", "com.example",
                                  "--environment", "Sandbox"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(try result.json().arrayValue?.first?["errorCode"] == "chain_not_trusted")
    }

    @Test("check against a ledger's own configuration (--db) with the Apple test CA")
    func checkWithLedger() throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("apple.sqlite")
        try CLI.initLedger(db: db, bundleId: "com.example", roots: [TestPaths.appleTestCA])
        let ok = try CLI.run(["check", TestPaths.appleSignedSample("testNotification").path, "--db", db])
        #expect(ok.exitCode == 0, "\(ok)")
        #expect(ok.stdout.contains("verified"))
        let refused = try CLI.run(["check", TestPaths.appleSignedSample("wrongBundleId").path, "--db", db])
        #expect(refused.exitCode == 1)
        #expect(refused.stdout.contains("bundle_mismatch"))
        // check writes nothing.
        #expect(try RawSQLite(path: db).scalarInt("SELECT count(*) FROM events") == 0)
        #expect(try RawSQLite(path: db).scalarInt("SELECT count(*) FROM quarantine") == 0)

        // And ingest of the same vectors through the real pipeline.
        let lines = try ["testNotification", "wrongBundleId"].map {
            PayloadFactory.body(signedPayload: try String(contentsOf: TestPaths.appleSignedSample($0), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let ingest = try CLI.run(["ingest", "--api-responses", "--db", db, "--json"], stdin: Data(lines.joined(separator: "\n").utf8))
        #expect(ingest.exitCode == 3, "\(ingest)")
        #expect(try ingest.json() == ["appended": 1, "duplicates": 0, "quarantined": 1])
    }
}
