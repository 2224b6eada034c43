import AppStoreModels
import EventStore
import Foundation
import GroupSimulator
import LedgerEvents
import LedgerStorage
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// Random group histories built from the lifecycle steps of the testing guide: claims (with retries
/// and Associate Seat), Apple-hosted joins and removals (typed, untyped and unknown revocation
/// types), `UNCLAIM_SEATS`, seat increases and decreases, renewals, partial seat refunds, Get Seat
/// Info, billing grace, and the endings: cancellation then expiry, grace expired, full refund.
enum StreamGenerator {
    typealias B = ScenarioBuilder

    static func stream(seed: UInt64, groups: Int = 3) -> B {
        var rng = SeededRandom(seed: seed)
        var b = B()
        var revocations = 0  // member revocations so far: their types take turns
        for g in 0..<groups {
            let otid = "20000000000\(String(format: "%05d", g + 1))"
            let app = "70400000000\(String(format: "%07d", g + 1))"
            var seats = Int64.random(in: 3...10, using: &rng)
            var periodStart = B.days(Double(g))
            var periodEnd = periodStart + 30 * B.day
            var txCounter = 0
            func nextTx() -> String { txCounter += 1; return "\(otid)\(txCounter)" }
            let model = Bool.random(using: &rng) ? "DEVELOPER" : "APPLE"
            b.notification("SUBSCRIBED", "INITIAL_BUY", at: periodStart,
                           transaction: B.transaction(id: otid, original: otid, app: app, quantity: seats, purchase: periodStart,
                                                      expires: periodEnd, model: model),
                           renewal: B.renewal(original: otid, quantity: seats, signed: periodStart))
            var claims: [String] = []
            var members: [(String, String)] = []
            // The current period's transactions (id, quantity) and seats refunded from its first.
            var periodTransactions: [(id: String, quantity: Int64)] = [(otid, seats)]
            var periodRefunded: Int64 = 0
            var time = periodStart
            var ended = false
            for step in 0..<Int.random(in: 4...14, using: &rng) where !ended {
                time += EpochMillis.random(in: 3_600_000...(3 * B.day), using: &rng)
                // Joins and removals (0–2) twice as likely as the rest, so groups have members to lose.
                let pick = Int.random(in: 0..<20, using: &rng)
                switch pick < 15 ? pick : pick % 3 {
                case 0, 1:
                    if model == "DEVELOPER" {
                        let claim = "claim-\(g)-\(step)"
                        claims.append(claim)
                        b.claim(claim, purchaser: otid, at: time, memberRef: "user-\(g)-\(step)")
                    } else {
                        let member = "30000000000\(String(format: "%02d", g))\(String(format: "%03d", step))"
                        let memberApp = "8\(member)"
                        members.append((member, memberApp))
                        b.notification("SUBSCRIBED", "INITIAL_BUY", at: time, transaction: B.transaction(
                            id: member, original: member, app: memberApp, ownership: "ASSIGNED", purchase: time, expires: periodEnd,
                            model: "APPLE"))
                        b.api("GetGroupMembers", path: "/groups/v1/group/grp-\(g)",
                              body: ["members": .array(([app] + members.map(\.1)).map { ["appTransactionId": .string($0)] })],
                              at: time + 1000)
                    }
                case 2:
                    if let claim = claims.randomElement(using: &rng) { b.unclaim(claim, purchaser: otid, at: time) }
                    if let (member, memberApp) = members.randomElement(using: &rng) {
                        let type = ["ASSIGNMENT_REVOKE", nil, "SOMETHING_NEW", "FAMILY_REVOKE"][(revocations + g + Int(seed % 4)) % 4]
                        revocations += 1
                        b.notification("REVOKE", at: time, transaction: B.transaction(
                            id: member, original: member, app: memberApp, ownership: "ASSIGNED", purchase: periodStart,
                            expires: periodEnd, signed: time, model: "APPLE", revocationDate: time, revocationType: type))
                    }
                case 3:
                    if let claim = claims.randomElement(using: &rng) { b.notification("UNCLAIM_SEATS", at: time, unclaim: [claim]) }
                case 4:
                    let added = Int64.random(in: 1...3, using: &rng)
                    seats += added
                    let addition = nextTx()
                    periodTransactions.append((addition, added))
                    b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: time,
                                   transaction: B.transaction(id: addition, original: otid, app: app, quantity: added, purchase: time,
                                                              expires: periodEnd, model: model, seatAddition: true),
                                   renewal: B.renewal(original: otid, quantity: seats, signed: time))
                case 5:
                    b.notification("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: time,
                                   renewal: B.renewal(original: otid, quantity: max(2, seats - 2), signed: time))
                case 6:
                    periodStart = periodEnd
                    periodEnd = periodStart + 30 * B.day
                    seats = max(2, seats - Int64.random(in: 0...2, using: &rng))
                    time = max(time, periodStart)
                    let renewal = nextTx()
                    periodTransactions = [(renewal, seats)]
                    periodRefunded = 0
                    b.notification("DID_RENEW", at: periodStart,
                                   transaction: B.transaction(id: renewal, original: otid, app: app, quantity: seats,
                                                              purchase: periodStart, expires: periodEnd, model: model),
                                   renewal: B.renewal(original: otid, quantity: seats, signed: periodStart))
                case 7:
                    b.api("GetSeatInfo", path: "/groups/v1/transactions/\(otid)/seats",
                          body: ["totalSeatCount": .int(seats), "availableSeatCount": 0,
                                 "assignedSeatClaimIds": .array(claims.map(JSONValue.string))], at: time)
                case 8:
                    b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: time,
                                   renewal: B.renewal(original: otid, quantity: seats, grace: periodEnd + 6 * B.day, retry: true, signed: time))
                case 9:
                    // A partial seat refund on the period's first transaction.
                    guard seats > 2, let first = periodTransactions.first, periodRefunded + 1 < first.quantity else { continue }
                    seats -= 1
                    periodRefunded += 1
                    b.notification("REFUND", "SEATS", at: time,
                                   transaction: B.transaction(id: first.id, original: otid, app: app, quantity: first.quantity,
                                                              purchase: periodStart, expires: periodEnd, signed: time, model: model,
                                                              revokedSeats: periodRefunded),
                                   renewal: B.renewal(original: otid, quantity: seats, signed: time))
                case 10:
                    if let claim = claims.randomElement(using: &rng) {
                        b.api("AssociateSeat", method: "POST", path: "/groups/v1/transactions/\(otid)/seats/\(claim)/associate",
                              request: ["appTransactionId": .string("app-\(claim)")], at: time)
                    }
                case 11:
                    // Claim Seat retried with the same request: one seat.
                    if let claim = claims.randomElement(using: &rng) { b.claim(claim, purchaser: otid, at: time) }
                case 12:
                    // Cancellation, then expiry at the period end: the group ends.
                    b.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: min(time, periodEnd - 1000),
                                   renewal: B.renewal(original: otid, quantity: seats, signed: min(time, periodEnd - 1000)))
                    let first = periodTransactions[0]
                    b.notification("EXPIRED", "VOLUNTARY", at: periodEnd + 1000,
                                   transaction: B.transaction(id: first.id, original: otid, app: app, quantity: first.quantity,
                                                              purchase: periodStart, expires: periodEnd, model: model,
                                                              revokedSeats: periodRefunded > 0 ? periodRefunded : nil))
                    ended = true
                case 13:
                    // Billing grace, then grace expired: the group ends.
                    let graceEnd = periodEnd + 6 * B.day
                    b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: periodEnd + 1000,
                                   renewal: B.renewal(original: otid, quantity: seats, grace: graceEnd, retry: true, signed: periodEnd + 1000))
                    b.notification("GRACE_PERIOD_EXPIRED", at: graceEnd + 1000,
                                   renewal: B.renewal(original: otid, quantity: seats, grace: graceEnd, retry: true, signed: graceEnd + 1000))
                    ended = true
                default:
                    // Full refund of the current period: every transaction revoked, the group ends.
                    for (offset, transaction) in periodTransactions.enumerated() {
                        b.notification("REFUND", at: time + EpochMillis(offset), transaction: B.transaction(
                            id: transaction.id, original: otid, app: app, quantity: transaction.quantity, purchase: periodStart,
                            expires: periodEnd, signed: time + EpochMillis(offset), model: model, revocationDate: time + EpochMillis(offset),
                            revocationType: "REFUND_FULL", seatAddition: offset > 0))
                    }
                    ended = true
                }
            }
        }
        return b
    }

    /// The states of every group as of `t`, as canonical JSON (for exact comparison).
    static func states(_ facts: [EventFacts], asOf t: EpochMillis) -> [String: String] {
        let groups = GroupIdentityResolver.resolve(facts)
        var result: [String: String] = [:]
        for (key, membership) in groups {
            let state = GroupProjection.project(membership, facts: facts.filter { membership.concerns($0) }, asOf: t, knownAt: nil)
            result[key] = state.json.canonicalString()
        }
        return result
    }
}

@Suite("Projection properties")
struct ProjectionPropertyTests {
    @Test("the generated histories of the property tests cover every lifecycle step")
    func generatorCoversTheLifecycles() {
        var kinds = Set<String>()
        var revocationTypes = Set<String>()
        for seed in UInt64(1)...UInt64(12) {
            for fact in StreamGenerator.stream(seed: seed).facts {
                kinds.insert([fact.type, fact.subtype].compactMap { $0 }.joined(separator: "/"))
                for tx in fact.transactions where tx.revocationDate != nil {
                    revocationTypes.insert(tx.revocationType?.rawValue ?? "none")
                }
            }
        }
        let required: Set = ["SUBSCRIBED/INITIAL_BUY", "ClaimSeat", "UnclaimSeat", "AssociateSeat", "GetSeatInfo", "GetGroupMembers",
                             "REVOKE", "UNCLAIM_SEATS", "DID_CHANGE_RENEWAL_PREF/INCREASE_QUANTITY",
                             "DID_CHANGE_RENEWAL_PREF/DECREASE_QUANTITY", "DID_RENEW", "REFUND/SEATS", "REFUND",
                             "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY", "DID_FAIL_TO_RENEW/GRACE_PERIOD",
                             "GRACE_PERIOD_EXPIRED"]
        #expect(required.subtracting(kinds).isEmpty, "never generated: \(required.subtracting(kinds).sorted())")
        #expect(revocationTypes.isSuperset(of: ["ASSIGNMENT_REVOKE", "SOMETHING_NEW", "REFUND_FULL"]), "\(revocationTypes.sorted())")
    }

    @Test("any arrival order with any duplicates gives the identical state", arguments: Array(UInt64(1)...UInt64(12)))
    func orderAndDuplicatesDoNotMatter(seed: UInt64) {
        let stream = StreamGenerator.stream(seed: seed)
        let facts = stream.facts
        let horizon = (facts.map(\.occurredAt).max() ?? 0) + 40 * ScenarioBuilder.day
        var rng = SeededRandom(seed: seed &* 7919)
        // At the end and in the middle of the histories (three moments between the first and last event).
        let times = facts.map(\.occurredAt).sorted()
        let moments = [horizon] + (0..<3).compactMap { _ in times.randomElement(using: &rng).map { $0 + 1 } }
        let expected = moments.map { StreamGenerator.states(facts, asOf: $0) }
        #expect(!expected[0].isEmpty)
        for _ in 0..<5 {
            var shuffled = facts.shuffled(using: &rng)
            // Duplicates reach projections only as repeated facts if dedupe failed; they must be harmless too.
            shuffled += facts.filter { _ in Bool.random(using: &rng) }
            shuffled.shuffle(using: &rng)
            for (moment, states) in zip(moments, expected) {
                #expect(StreamGenerator.states(shuffled, asOf: moment) == states, "as of \(Timestamp.iso8601(moment))")
            }
        }
    }

    @Test("the state as of T equals the state built from only the events up to T", arguments: Array(UInt64(20)...UInt64(27)))
    func asOfEqualsPrefix(seed: UInt64) {
        let facts = StreamGenerator.stream(seed: seed).facts
        let times = facts.map(\.occurredAt).sorted()
        var rng = SeededRandom(seed: seed)
        #expect(!times.isEmpty, "seed \(seed) generated no events")
        var compared = 0
        for _ in 0..<6 {
            guard let t = times.randomElement(using: &rng).map({ $0 + EpochMillis.random(in: 0...3_600_000, using: &rng) }) else { continue }
            let prefix = facts.filter { $0.occurredAt <= t }
            let fromPrefix = StreamGenerator.states(prefix, asOf: t)
            let full = StreamGenerator.states(facts, asOf: t)
            // Groups that exist only through later events are absent from the prefix view.
            for (key, state) in fromPrefix {
                #expect(full[key] == state, "group \(key) as of \(Timestamp.iso8601(t))")
                compared += 1
            }
        }
        // An empty prefix at every drawn moment would compare nothing.
        #expect(compared > 0, "seed \(seed): no group existed at any moment drawn")
    }

    @Test("materialized projections after random batch orders equal a rebuild and the pure fold", arguments: [UInt64(41), 42, 43])
    func materializedEqualsRebuild(seed: UInt64) throws {
        let stream = StreamGenerator.stream(seed: seed, groups: 4)
        var rng = SeededRandom(seed: seed)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-prop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try EventStore.create(at: directory.appendingPathComponent("l.sqlite").path,
                                          configuration: LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil),
                                          roots: [])
        let maintainer = ProjectionMaintainer(store: store)
        var pending = stream.events.shuffled(using: &rng).map { ScenarioBuilder.newEvent($0) }
        while !pending.isEmpty {
            let size = Int.random(in: 1...max(1, min(7, pending.count)), using: &rng)
            var batch = Array(pending.prefix(size))
            pending.removeFirst(size)
            if Bool.random(using: &rng), let dup = batch.first { batch.append(dup) }
            _ = try store.write {
                let result = try store.append(events: batch)
                try maintainer.update(after: result.appended)
                return result
            }
        }
        let incremental = try store.foldedStates()
        #expect(!incremental.isEmpty)
        let stored = ProjectionMaintainer.memberships(from: try store.groupIndexRows(groupKeys: Set(try store.allGroupKeys())))
        // The rebuild resolves the same groups whatever its configuration: scan on this thread or
        // on a reader thread with its own connection; the identity pass in one scan, or in two
        // halves on two threads (from 2 events on).
        for (readerThread, split) in [(true, 2), (true, Int.max), (false, 2), (false, Int.max)] {
            var rebuilder = ProjectionRebuilder(store: store)
            rebuilder.scansOnReaderThread = readerThread
            rebuilder.identitySplitMinimum = split
            rebuilder.splitsIdentityScan = true  // on any machine, one core included
            rebuilder.batchSize = 5
            var recomputed: [String: GroupMembership] = [:]
            let statistics = try rebuilder.recompute(progress: nil) { membership in
                #expect(recomputed.updateValue(membership, forKey: membership.groupKey) == nil, "group \(membership.groupKey) twice")
            }
            #expect(stored == recomputed, "reader thread \(readerThread), split from \(split)")
            #expect(statistics.events == stream.events.count)
        }
        // And the groups folded from the maintained index equal the pure fold of the same events.
        let facts = stream.facts
        let resolved = GroupIdentityResolver.resolve(facts)
        #expect(Set(resolved.keys) == Set(incremental.keys))
        for (key, membership) in resolved {
            let concerning = facts.filter { membership.concerns($0) }
            let pure = GroupProjection.project(membership, facts: concerning, asOf: concerning.map(\.occurredAt).max() ?? 0, knownAt: nil)
            // The whole state, not only its seats (and a missing side is a failure, not nil == nil).
            let folded = try #require(incremental[key], "group \(key) is not in the maintained index")
            #expect(try JSONValue.parse(folded) == pure.json, "group \(key)")
        }
    }
}

@Suite("Rebuild from the log")
struct RebuildFromLogTests {
    @Test("events stored without facts: the rebuild derives them and gives the incremental projections", arguments: [UInt64(51), 52])
    func derivesMissingFacts(seed: UInt64) throws {
        let stream = StreamGenerator.stream(seed: seed, groups: 5)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-rebuild-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil)
        let events = stream.events.map { ScenarioBuilder.newEvent($0) }
        // One ledger maintained at append, one written without facts or projections.
        let maintained = try EventStore.create(at: directory.appendingPathComponent("a.sqlite").path, configuration: configuration, roots: [])
        _ = try maintained.write {
            let result = try maintained.append(events: events)
            try ProjectionMaintainer(store: maintained).update(after: result.appended)
            return result
        }
        let bare = try EventStore.create(at: directory.appendingPathComponent("b.sqlite").path, configuration: configuration, roots: [])
        _ = try bare.commit(events: events)
        #expect(try bare.positionsWithoutFacts().count == events.count)

        var rebuilder = ProjectionRebuilder(store: bare)
        rebuilder.groupsPerWrite = 2  // several writes, the last one partial
        rebuilder.batchSize = 7       // several batches of events read, derived and stored at once
        rebuilder.scansOnReaderThread = seed % 2 == 1  // events read on a reader thread, or on this one
        var counts: [RebuildCount] = []
        rebuilder.counted = { counts.append($0) }
        let groups = try rebuilder.rebuildAll(progress: nil)
        // Each counted step climbs to its total, in order: facts, identities, the index, the snapshots.
        let derived = counts.filter { $0.step == "deriving facts" }
        #expect(derived.map(\.done) == Array(stride(from: 7, to: events.count, by: 7)) + [events.count])
        #expect(derived.allSatisfy { $0.total == events.count && $0.unit == "events" })
        let identities = counts.filter { $0.step == "resolving identities" }
        #expect(identities.last == RebuildCount(step: "resolving identities", done: events.count, total: events.count, unit: "events"))
        #expect(identities.map(\.done) == identities.map(\.done).sorted())
        let written = counts.filter { $0.step == "writing the group index" }
        #expect(written.map(\.done) == Array(stride(from: 2, to: groups, by: 2)) + [groups])
        #expect(written.allSatisfy { $0.total == groups && $0.unit == "groups" })
        // Then the group snapshots, every group's (the index was written whole), a chunk at a time.
        let folded = counts.filter { $0.step == "folding group snapshots" }
        #expect(folded.map(\.done) == Array(stride(from: 2, to: groups, by: 2)) + [groups])
        #expect(folded.allSatisfy { $0.total == groups && $0.unit == "groups" })
        #expect(counts.map(\.step) == derived.map(\.step) + identities.map(\.step) + written.map(\.step) + folded.map(\.step))
        #expect(try bare.positionsWithoutFacts().isEmpty)
        let expected = try maintained.foldedStates()
        let rebuilt = try bare.foldedStates()
        #expect(groups == expected.count)
        #expect(rebuilt == expected)
        #expect(try rebuilder.staleGroups(progress: nil).isEmpty)
    }

    @Test("cached facts that do not decode are re-derived from their events: same projections, nothing stale")
    func undecodableCachedFacts() throws {
        let stream = StreamGenerator.stream(seed: 54, groups: 4)
        let directory = try TemporaryDirectory(label: "damaged")
        let path = directory.path("d.sqlite")
        let store = try directory.bareStore("d.sqlite")
        let events = stream.events.map { ScenarioBuilder.newEvent($0) }
        _ = try store.write {
            let result = try store.append(events: events)
            try ProjectionMaintainer(store: store).update(after: result.appended)
            return result
        }
        let expected = try store.foldedStates()
        // Damage a third of the cached facts rows: a foreign version byte, or a truncated blob.
        let sql = try RawSQLite(path: path)
        try sql.execute("UPDATE event_facts SET facts = x'7f00' WHERE position % 3 = 0")
        try sql.execute("UPDATE event_facts SET facts = substr(facts, 1, 5) WHERE position % 3 = 1")
        sql.close()
        var rebuilder = ProjectionRebuilder(store: store)
        rebuilder.batchSize = 7
        #expect(try rebuilder.staleGroups(progress: nil).isEmpty)
        // The identity pass in one scan, then in two halves on two threads (each re-deriving its damaged rows).
        for split in [Int.max, 2] {
            rebuilder.identitySplitMinimum = split
            rebuilder.splitsIdentityScan = true  // on any machine, one core included
            _ = try rebuilder.rebuildAll(progress: nil)
            #expect(try store.foldedStates() == expected, "split from \(split)")
        }
    }

    @Test("positionsWithoutFacts finds gaps at the start, middle and end of the facts table")
    func gapsInFacts() throws {
        let stream = StreamGenerator.stream(seed: 53, groups: 2)
        let directory = try TemporaryDirectory(label: "gaps")
        let store = try directory.bareStore("g.sqlite")
        let events = stream.events.map { ScenarioBuilder.newEvent($0, indexed: false) }
        _ = try store.commit(events: events)
        let count = Int64(events.count)
        #expect(count >= 6)
        let stored: [Int64] = [2, 3, count / 2, count - 1]
        try store.write {
            for position in stored { try store.storeFacts(position: position, facts: Data([1])) }
        }
        let expected = (1...count).filter { !stored.contains($0) }
        #expect(try store.positionsWithoutFacts() == expected)
    }
}

@Suite("Facts storage codec")
struct FactsCodecTests {
    @Test("every generated event's facts survive encode → decode unchanged", arguments: [UInt64(3), 4, 5])
    func roundTrip(seed: UInt64) throws {
        let facts = StreamGenerator.stream(seed: seed, groups: 4).facts
        #expect(!facts.isEmpty)
        for fact in facts {
            #expect(FactsCodec.decode(FactsCodec.encode(fact)) == fact, "\(fact.eventId)")
        }
    }

    @Test("a truncated or foreign blob decodes to nil (the caller re-derives from the event)")
    func damaged() throws {
        let fact = try #require(StreamGenerator.stream(seed: 9).facts.first)
        let blob = FactsCodec.encode(fact)
        #expect(FactsCodec.decode(blob.prefix(blob.count - 1)) == nil)
        #expect(FactsCodec.decode(Data([99]) + blob.dropFirst()) == nil)
        #expect(FactsCodec.decode(Data()) == nil)
    }
}
