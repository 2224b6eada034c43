import AppStoreModels
import Foundation
import GroupSimulator
import JWSVerification
import Testing

@Suite("Every JWS the simulator emits verifies against Tools/pki/root.pem")
struct SignatureTests {
    @Test("all built-in lifecycles: outer and nested JWS verify; app identity matches the ledger's")
    func builtInsVerify() throws {
        var checked = 0
        for scenario in BuiltInLifecycles.all {
            let run = try SimFixtures.simulator.run(scenario, options: BuiltInLifecycles.options(for: scenario))
            for line in run.eventLines {
                let value = try JSONValue.parse(line)
                var pending = SimFixtures.jwsStrings(in: value)
                while let jws = pending.popLast() {
                    let verified = try SimFixtures.verifier.verify(jws)
                    pending += SimFixtures.jwsStrings(in: verified.payload)
                    checked += 1
                    if let bundle = verified.payload["bundleId"] ?? verified.payload["data"]?["bundleId"] {
                        #expect(bundle == "com.example.reps", "\(scenario.name)")
                    }
                    if let env = verified.payload["environment"] ?? verified.payload["data"]?["environment"] {
                        #expect(env == "Sandbox", "\(scenario.name)")
                    }
                }
                if value["apiResponse"] != nil {
                    #expect(try APIResponseEnvelope(json: value["apiResponse"]!).isSuccess)
                }
            }
        }
        #expect(checked > 150)
    }

    @Test("history envelopes carry verifiable notifications")
    func historyVerifies() throws {
        let run = try SimFixtures.run("apple-member-join") { $0.faults.drop = .rate(1.0) }
        #expect(!run.historyLines.isEmpty)
        for line in run.historyLines {
            for jws in SimFixtures.jwsStrings(in: try JSONValue.parse(line)) {
                _ = try SimFixtures.verifier.verify(jws)
            }
        }
    }

    @Test("a rogue root does not verify the simulator's output")
    func rogueRootRejects() throws {
        let rogue = try SignedPayloadVerifier(trustAnchors: TrustAnchor.load(contentsOf: SimFixtures.pki.appendingPathComponent("rogue-root.pem")))
        let run = try SimFixtures.run("group-purchase")
        let jws = try #require(try JSONValue.parse(run.eventLines[0])["signedPayload"]?.stringValue)
        #expect(throws: VerificationError.self) { try rogue.verify(jws) }
    }
}
