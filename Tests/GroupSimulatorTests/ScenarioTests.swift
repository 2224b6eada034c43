import AppStoreModels
import Foundation
import GroupSimulator
import Testing

@Suite("Scenario file format, committed files, and the truth model")
struct ScenarioTests {
    @Test("every built-in round-trips through the scenario file format")
    func roundTrip() throws {
        for scenario in BuiltInLifecycles.all {
            let text = scenario.json.prettyString()
            let parsed = try Scenario.parse(Data(text.utf8))
            #expect(parsed == scenario, "\(scenario.name)")
            #expect(parsed.json == scenario.json)
        }
    }

    @Test("a hand-written scenario file runs, and bad files get clear errors")
    func handWritten() throws {
        let text = """
        {"name": "mine", "start": "2027-01-01T00:00:00Z",
         "group": {"invitationManagement": "DEVELOPER", "seats": 4, "period": "7d", "priceTiers": [{"price": 4990}]},
         "steps": [{"do": "purchase"}, {"do": "claimSeat", "member": "ann", "at": "+2h"},
                   {"do": "cancel", "at": "3d"}, {"do": "expire"}]}
        """
        let scenario = try Scenario.parse(Data(text.utf8))
        let plan = try SimulationPlan(scenario)
        #expect(plan.events.count == 4)
        #expect(plan.stepTimes[1] == Timestamp.parse("2027-01-01T02:00:00Z")!)
        #expect(plan.stepTimes[3] == Timestamp.parse("2027-01-08T00:00:00Z")!)
        let state = try #require(plan.expectedStates().first)
        #expect(state["status"] == "EXPIRED")
        #expect(state["members"]?.arrayValue?.last?["revocation"]?["reason"] == "GROUP_EXPIRED")
        #expect(try Scenario.parse(Data(scenario.json.prettyString().utf8)) == scenario)

        let bad: [(String, String)] = [
            (#"{"name":"x","steps":[{"do":"purchas"}]}"#, "unknown action"),
            (#"{"name":"x","steps":[{"do":"purchase","sets":3}]}"#, "unknown key \"sets\""),
            (#"{"name":"x","steps":[{"do":"claimSeat"}]}"#, "missing \"member\""),
            (#"{"name":"x","steps":[{"do":"purchase","at":"3 weeks"}]}"#, "bad"),
            (#"{"name":"x","steps":[{"do":"memberJoin","member":"a"}]}"#, "no group yet"),
            (#"{"name":"x","group":{"invitationManagement":"DEVELOPER"},"steps":[{"do":"purchase"},{"do":"memberJoin","member":"a"}]}"#, "Apple-hosted"),
        ]
        for (json, fragment) in bad {
            let message = Self.failure(json)
            #expect(message?.contains(fragment) == true, "\(json) → \(message ?? "accepted")")
        }
    }

    /// The error a scenario text fails with (parsing or planning), or `nil` if it runs.
    static func failure(_ json: String) -> String? {
        do {
            _ = try SimulationPlan(try Scenario.parse(Data(json.utf8)))
            return nil
        } catch {
            return error.message
        }
    }

    @Test("committed Events/scenarios files have not drifted from what the simulator produces")
    func committedFilesCurrent() throws {
        let report = try ScenarioFiles.sync(directory: SimFixtures.scenariosDirectory, simulator: SimFixtures.simulator, write: false)
        #expect(report.drifted.isEmpty, "\(report.drifted.map { "\($0.file): \($0.detail)" }) — run Tools/scripts/regenerate-scenarios.sh")
        #expect(report.unchanged.count == BuiltInLifecycles.all.count * 2)
        #expect(report.stale.isEmpty)
    }

    @Test("the guide's 10/9/6: renewalOverCapacity 4 before the renewal, overCapacity 4 after")
    func guide1096() throws {
        let scenario = try SimFixtures.builtIn("guide-10-9-6")
        let plan = try SimulationPlan(scenario, options: BuiltInLifecycles.options(for: scenario))
        let renewStep = try #require(scenario.steps.firstIndex { $0.action == .renew })
        let before = try #require(plan.expectedStates(at: plan.stepTimes[renewStep] - 1).first)
        #expect(before["seats"]?["total"] == 10)
        #expect(before["seats"]?["renewalTotal"] == 6)
        #expect(before["seats"]?["claimed"] == 9)
        #expect(before["seats"]?["overCapacity"] == 0)
        #expect(before["seats"]?["renewalOverCapacity"] == 4)
        let after = try #require(plan.expectedStates().first)
        #expect(after["seats"]?["total"] == 6)
        #expect(after["seats"]?["overCapacity"] == 4)
        #expect(after["seats"]?["available"] == 0)
        #expect(after["status"] == "ACTIVE")
        #expect(after["drift"] == [])
    }

    @Test("expected states follow the contract: keys, member order, and event ids that exist in the stream")
    func contract() throws {
        let groupKeys: Set<String> = ["groupKey", "purchaserOriginalTransactionId", "groupIds", "productId", "invitationManagement",
                                      "status", "asOf", "knownAt", "seats", "members", "apple", "drift"]
        let seatKeys: Set<String> = ["total", "renewalTotal", "refunded", "claimed", "assigned", "available", "overCapacity",
                                     "renewalOverCapacity"]
        let memberKeys: Set<String> = ["role", "originalTransactionId", "appTransactionId", "seatClaimId", "memberRef", "hasAccess",
                                       "accessSince", "accessUntil", "revocation"]
        for scenario in BuiltInLifecycles.all {
            let plan = try SimulationPlan(scenario, options: BuiltInLifecycles.options(for: scenario))
            let ids = Set(plan.events.map(\.eventId))
            for state in plan.expectedStates() {
                #expect(Set(state.objectValue?.keys ?? [:].keys) == groupKeys, "\(scenario.name)")
                #expect(Set(state["seats"]?.objectValue?.keys ?? [:].keys) == seatKeys)
                #expect(state["knownAt"] == .null)
                #expect(state["asOf"] == .string(Timestamp.iso8601(plan.evaluationTime)))
                let members = state["members"]?.arrayValue ?? []
                let ranks = members.map { ["PURCHASER": 0, "ASSIGNED": 1, "CLAIM": 2][$0["role"]?.stringValue ?? ""] ?? 9 }
                #expect(ranks == ranks.sorted())
                for member in members {
                    #expect(Set(member.objectValue?.keys ?? [:].keys) == memberKeys)
                    if let eventId = member["revocation"]?["eventId"]?.stringValue {
                        #expect(ids.contains(eventId), "\(scenario.name): revocation names unknown event \(eventId)")
                        #expect(member["hasAccess"] == false)
                    }
                }
            }
        }
        // An API response's id is the SHA-256 of its canonical line.
        let run = try SimFixtures.run("developer-unclaim")
        let unclaim = try #require(run.plan.events.first { $0.label.hasPrefix("UnclaimSeat") })
        let line = run.eventLines[unclaim.index]
        #expect(unclaim.eventId == SimulatorInternals.sha256Hex(try JSONValue.parse(line).canonicalData()))
        let members = try #require(run.expected.first?["members"]?.arrayValue)
        #expect(members.contains { $0["revocation"]?["eventId"]?.stringValue == unclaim.eventId })
    }

    @Test("truth model: seat refunds, unknown revocation types, placeholders, organizations, grace")
    func truthSpotChecks() throws {
        func state(_ name: String) throws -> [JSONValue] {
            let s = try SimFixtures.builtIn(name)
            return try SimulationPlan(s, options: BuiltInLifecycles.options(for: s)).expectedStates()
        }
        let refund = try #require(try state("partial-seat-refund-apple").first)
        #expect(refund["seats"]?["total"] == 2 && refund["seats"]?["refunded"] == 3 && refund["seats"]?["assigned"] == 1)
        #expect(refund["members"]?.arrayValue?.compactMap { $0["revocation"]?["reason"]?.stringValue } == ["SEAT_REFUND", "SEAT_REFUND"])
        let unknown = try #require(try state("unknown-revocation-type").first)
        #expect(unknown["members"]?.arrayValue?.compactMap { $0["revocation"]?["reason"]?.stringValue } == ["SOMETHING_NEW"])
        let placeholder = try state("sandbox-placeholder")
        #expect(placeholder.count == 2)
        #expect(placeholder[0]["groupIds"] == [])
        #expect(placeholder[1]["groupKey"] == "unlinked:2000022000000002")
        let org = try #require(try state("organization-seats").first)
        #expect(org["status"] == "UNKNOWN" && org["purchaserOriginalTransactionId"] == .null)
        #expect(org["groupIds"] == .array([org["groupKey"]!]))
        let grace = try #require(try state("grace-period").first)
        #expect(grace["status"] == "GRACE_PERIOD" && grace["seats"]?["assigned"] == 2)
        let expired = try #require(try state("grace-expired").first)
        #expect(expired["members"]?.arrayValue?.map { $0["revocation"]?["reason"]?.stringValue ?? "" } == ["GRACE_PERIOD_EXPIRED", "GROUP_EXPIRED"])
    }

    @Test("accelerated mode: a month is five minutes")
    func accelerated() throws {
        let scenario = try SimFixtures.builtIn("cancel-expire")
        var options = BuiltInLifecycles.options(for: scenario)
        options.accelerated = true
        let plan = try SimulationPlan(scenario, options: options)
        #expect(plan.stepTimes.last! - plan.stepTimes.first! == 300_000)
        #expect(plan.expectedStates().first?["status"] == "EXPIRED")
    }
}
