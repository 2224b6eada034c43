@testable import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
@testable import Projections
@testable import SeatLedger
import Testing

/// A rebuild derives facts from only the parts of the decoded JSON that `EventFacts` reads
/// (`EventFacts.decodedFieldsRead`): the facts must be exactly those of the whole tree, and the
/// pruned parse must refuse exactly the texts the whole parse refuses.
@Suite("Facts from pruned JSON")
struct EventFactsPruningTests {
    /// How many values a tree holds (to show that pruning dropped something).
    private static func size(_ value: JSONValue) -> Int {
        switch value {
        case .object(let members): return 1 + members.values.reduce(0) { $0 + size($1) }
        case .array(let items): return 1 + items.reduce(0) { $0 + size($1) }
        default: return 1
        }
    }

    static let scenarioNames: [String] = {
        let directory = TestPaths.repoRoot.appendingPathComponent("Events/scenarios")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".ndjson") }.map { String($0.dropLast(".ndjson".count)) }.sorted()
    }()

    @Test("there are sample streams to compare on")
    func samplesExist() {
        #expect(Self.scenarioNames.count >= 10)
    }

    @Test("every event of every sample stream: facts from the pruned text equal facts from the whole text",
          arguments: scenarioNames)
    func sampleStream(name: String) throws {
        let file = TestPaths.repoRoot.appendingPathComponent("Events/scenarios/\(name).ndjson")
        let lines = ScenarioConformanceTests.lines(try String(contentsOf: file, encoding: .utf8))
        let test = try TestLedger()
        _ = try ScenarioConformanceTests.ingest(lines, into: test.ledger)
        let count = try test.eventCount()
        #expect(count > 0)
        let events = try test.store.eventsForFacts(Array(1...count)[...])
        #expect(events.count == Int(count))
        var dropped = 0
        for event in events {
            let whole = event.parsed()
            let pruned = event.parsed(pruning: EventFacts.decodedFieldsRead)
            #expect(whole.decoded != .null, "\(name) event \(event.metadata.position) has decoded JSON")
            #expect(EventFacts(pruned) == EventFacts(whole), "\(name) event \(event.metadata.position)")
            dropped += Self.size(whole.decoded) - Self.size(pruned.decoded)
        }
        #expect(dropped > 0, "\(name): pruning dropped nothing")
    }

    @Test("generated streams (revocations, unclaims, seat info, groups, members): the same facts", arguments: Array(UInt64(1)...12))
    func generatedStream(seed: UInt64) throws {
        let builder = StreamGenerator.stream(seed: seed, groups: 4)
        #expect(!builder.events.isEmpty)
        for event in builder.events {
            let text = event.decoded.canonicalString()
            let metadata = EventForFacts(metadata: event, decodedText: text)
            let pruned = metadata.parsed(pruning: EventFacts.decodedFieldsRead)
            #expect(EventFacts(pruned) == EventFacts(event), "seed \(seed) event \(event.eventId)")
        }
    }

    @Test("only the members a rule names are kept; a value of another type is kept whole")
    func keepsWhatTheRuleNames() throws {
        let rule = JSONPruning.members([
            "a": .all,
            "b": .members(["x": .all]),
            "c": .items(.members(["y": .all])),
            "d": .members(["z": .all]),
        ])
        let text = #"{"a":{"deep":[1,2]},"b":{"x":1,"gone":"s"},"c":[{"y":true,"gone":null},"text",[1]],"d":"not an object","e":{"gone":1}}"#
        let tree = try JSONValue.parse(text, pruning: rule)
        let expected = try JSONValue.parse(#"{"a":{"deep":[1,2]},"b":{"x":1},"c":[{"y":true},"text",[1]],"d":"not an object"}"#)
        #expect(tree == expected)
    }

    @Test("a repeated kept member keeps its last value, as the whole parse does")
    func repeatedMembers() throws {
        let text = #"{"a":1,"skip":{"a":5},"a":2}"#
        #expect(try JSONValue.parse(text, pruning: .members(["a": .all])) == .object(["a": .int(2)]))
        #expect(try JSONValue.parse(text)["a"] == .int(2))
    }

    @Test("escaped member names are matched by their value")
    func escapedNames() throws {
        let text = #"{"\u0061":1,"b\"":2,"c":3}"#
        #expect(try JSONValue.parse(text, pruning: .members(["a": .all, "b\"": .all])) == .object(["a": .int(1), "b\"": .int(2)]))
    }

    /// Texts the whole parse refuses, each with the fault in a part the rule leaves out.
    static let refused: [String] = [
        #"{"keep":1,"skip":"\#u{01}"}"#,            // control character in a skipped string
        "{\"keep\":1,\"skip\":\"\u{FF}\"}",          // (valid here; replaced below by raw bytes)
        #"{"keep":1,"skip":"\x"}"#,                  // bad escape
        #"{"keep":1,"skip":"\ud800"}"#,              // unpaired surrogate
        #"{"keep":1,"skip":{"a":}}"#,                // missing value
        #"{"keep":1,"skip":[1,]}"#,                  // trailing comma
        #"{"keep":1,"skip":{"a" 1}}"#,               // missing colon
        #"{"keep":1,"skip":01}"#,                    // leading zero
        #"{"keep":1,"skip":1e999}"#,                 // out of range
        #"{"keep":1,"skip":99999999999999999999}"#,  // integer out of range
        #"{"keep":1,"skip":tru}"#,                   // bad literal
        #"{"keep":1,"skip":{"unterminated":[1,2}"#,  // unterminated
        #"{"keep":1,"skip":"open"#,                  // unterminated string
        #"{"keep":1} trailing"#,                     // data after the value
        "{\"keep\":1,\"skip\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",  // too deep
    ]

    @Test("a fault in a skipped part is refused as the whole parse refuses it", arguments: refused.indices)
    func refusesWhatTheWholeParseRefuses(index: Int) throws {
        let rule = JSONPruning.members(["keep": .all])
        var bytes = Array(Self.refused[index].utf8)
        if index == 1 {
            // Invalid UTF-8 (a lone 0xFF) inside a skipped string: only raw bytes can hold it.
            bytes = Array(#"{"keep":1,"skip":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes: bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        if String(bytes: bytes, encoding: .utf8) != nil {
            #expect(throws: JSONParseError.self, "\(text)") { try JSONValue.parse(text, pruning: rule) }
        } else {
            // A Swift string cannot hold invalid UTF-8 (decoding repairs it): check the pruned
            // parser on the raw bytes through the same entry the string one uses.
            #expect(throws: JSONParseError.self) {
                try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in try JSONTextParser.parse(buffer, pruning: rule) }
            }
        }
    }

    @Test("valid skipped parts of every kind are accepted")
    func acceptsValidSkippedParts() throws {
        let text = #"{"skip":{"s":"a\"b\u00e9\ud83d\ude00","n":[-0.5e+3,0,-1,123456789012345678901.5],"l":[true,false,null],"o":{}},"keep":"é"}"#
        #expect(try JSONValue.parse(text, pruning: .members(["keep": .all])) == .object(["keep": .string("é")]))
    }
}
