import AppStoreModels
import Foundation
import JWSSigning
import Testing

@testable import JWSVerification

/// Paths and helpers shared by the JWS tests.
///
/// The repository root is found from this file's path; Apple's vectors and roots are read from
/// `<repo>/../shared/fixtures/` and never copied into the repository.
enum Fixtures {
    static let repoRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent()  // JWSVerificationTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()
    static let pkiDirectory = repoRoot.appendingPathComponent("Tools/pki")
    /// `<repo>/../shared/fixtures`, or `$SEATLEDGER_SHARED_FIXTURES` when set (a checkout, such as
    /// a git worktree, whose parent directory holds no `shared/`).
    static let sharedFixtures: URL = ProcessInfo.processInfo.environment["SEATLEDGER_SHARED_FIXTURES"].flatMap {
        $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true)
    } ?? repoRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let appleVectors = sharedFixtures.appendingPathComponent("apple-test-vectors")
    static let appleRootG3 = sharedFixtures.appendingPathComponent("apple-roots/AppleRootCA-G3.cer")
    static let appleTestCA = appleVectors.appendingPathComponent("certs/testCA.der")

    /// One of Apple's signed samples, trimmed of surrounding whitespace.
    static func appleSigned(_ name: String) throws -> String {
        let url = appleVectors.appendingPathComponent("mock_signed_data").appendingPathComponent(name)
        return try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Trust anchors from a file in `Tools/pki`.
    static func pkiAnchors(_ file: String) throws -> [TrustAnchor] {
        try TrustAnchor.load(contentsOf: pkiDirectory.appendingPathComponent(file))
    }

    /// A verifier trusting the given `Tools/pki` root files.
    static func verifier(trusting files: String...) throws -> SignedPayloadVerifier {
        try SignedPayloadVerifier(trustAnchors: files.flatMap { try pkiAnchors($0) })
    }

    /// The JWS signer for a test-PKI chain (`""` main, `"p256-"`, `"rogue-"`, `"expired-"` …).
    static func signer(_ prefix: String = "") throws -> JWSSigner {
        try JWSSigner.loadTestPKI(directory: pkiDirectory, prefix: prefix)
    }

    /// DER of a PEM certificate in `Tools/pki`.
    static func certificateDER(_ file: String) throws -> Data {
        let anchors = try pkiAnchors(file)
        return try #require(anchors.first).der
    }

    /// Epoch milliseconds of an ISO 8601 instant such as "2025-06-01T00:00:00Z".
    static func milliseconds(_ iso: String) -> Int64 {
        guard let date = ISO8601DateFormatter().date(from: iso) else {
            Issue.record("bad ISO date \(iso)")
            return 0
        }
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    /// A notification-like payload.
    static func payload(signedDate: Int64?, index: Int = 0, extra: [String: JSONValue] = [:]) -> JSONValue {
        var fields: [String: JSONValue] = [
            "notificationType": .string("SUBSCRIBED"),
            "notificationUUID": .string("00000000-0000-4000-8000-\(String(format: "%012d", index))"),
            "data": .object(["bundleId": .string("com.example.seats"), "quantity": .int(5)]),
            "index": .int(Int64(index)),
        ]
        if let signedDate { fields["signedDate"] = .int(signedDate) }
        for (key, value) in extra { fields[key] = value }
        return .object(fields)
    }

    /// A compact JWS built by hand (for headers `JWSSigner` would never produce).
    static func compact(headerBytes: Data, payloadBytes: Data, signer: ES256Signer) throws -> String {
        let input = Base64URL.encode(headerBytes) + "." + Base64URL.encode(payloadBytes)
        return input + "." + Base64URL.encode(try signer.sign(Data(input.utf8)))
    }

    /// A compact JWS with an arbitrary header object.
    static func compact(header: JSONValue, payload: JSONValue, signer: ES256Signer) throws -> String {
        try compact(headerBytes: header.canonicalData(), payloadBytes: payload.canonicalData(), signer: signer)
    }

    /// The standard header for a signer's chain, with `overrides` applied (`.null` removes a key).
    static func header(for signer: JWSSigner, overrides: [String: JSONValue] = [:]) -> JSONValue {
        var fields: [String: JSONValue] = [
            "alg": .string("ES256"),
            "x5c": .array(signer.certificateChain.map { .string($0.base64EncodedString()) }),
        ]
        for (key, value) in overrides {
            if value.isNull { fields[key] = nil } else { fields[key] = value }
        }
        return .object(fields)
    }

    /// The error thrown by `body`, or `nil` if it succeeded.
    static func error(_ body: () throws(VerificationError) -> VerifiedJWS) -> VerificationError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    /// Replaces part `index` (0 header, 1 payload, 2 signature) of a compact JWS.
    static func replacingPart(_ index: Int, of compact: String, with part: String) -> String {
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = part
        return parts.joined(separator: ".")
    }
}

/// Dates used throughout: the main chain is valid 2024-01-01 ..< 2036-01-01, the short-lived
/// leaf 2024-01-01 ..< 2024-06-01.
enum TestDates {
    static let mid2025 = Fixtures.milliseconds("2025-06-01T12:00:00Z")
    static let march2024 = Fixtures.milliseconds("2024-03-01T00:00:00Z")
    static let beforePKI = Fixtures.milliseconds("2023-12-31T23:59:59Z")
    static let afterPKI = Fixtures.milliseconds("2036-01-01T00:00:00Z")
    static let shortLeafEnd = Fixtures.milliseconds("2024-06-01T00:00:00Z")
}
