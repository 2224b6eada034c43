import AppStoreModels
import Foundation
import GroupSimulator
import JWSSigning
import JWSVerification
import Testing

/// Shared fixtures: the repository root, the simulator signing with `Tools/pki`, and a verifier
/// trusting `Tools/pki/root.pem` (what the ledger is initialised with).
enum SimFixtures {
    static let repoRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent()  // GroupSimulatorTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()
    static let pki = repoRoot.appendingPathComponent("Tools/pki")
    static let scenariosDirectory = repoRoot.appendingPathComponent("Events/scenarios")

    static let simulator: GroupSimulator = {
        // A missing PKI is a broken checkout; fail loudly.
        try! GroupSimulator(pkiDirectory: pki)
    }()

    static let verifier: SignedPayloadVerifier = {
        try! SignedPayloadVerifier(trustAnchors: TrustAnchor.load(contentsOf: pki.appendingPathComponent("root.pem")))
    }()

    static func builtIn(_ name: String) throws -> Scenario {
        try #require(BuiltInLifecycles.named(name), "no built-in \(name)")
    }

    static func run(_ name: String, seed: UInt64 = 0, configure: (inout SimulationOptions) throws -> Void = { _ in }) throws -> SimulationRun {
        let scenario = try builtIn(name)
        var options = BuiltInLifecycles.options(for: scenario, seed: seed)
        try configure(&options)
        return try simulator.run(scenario, options: options)
    }

    /// The decoded notification payload of a `{"signedPayload": …}` line (signature verified).
    static func notification(_ line: String) throws -> JSONValue {
        let jws = try #require(try JSONValue.parse(line)["signedPayload"]?.stringValue)
        return try verifier.verify(jws).payload
    }

    static func uuid(ofLine line: String) throws -> String? {
        try notification(line)["notificationUUID"]?.stringValue
    }

    /// Every JWS string anywhere inside `value`.
    static func jwsStrings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let s):
            return s.hasPrefix("eyJ") && s.split(separator: ".", omittingEmptySubsequences: false).count == 3 ? [s] : []
        case .array(let items): return items.flatMap(jwsStrings)
        case .object(let members): return members.values.flatMap(jwsStrings)
        default: return []
        }
    }
}
