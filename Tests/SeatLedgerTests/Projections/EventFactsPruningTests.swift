@testable import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
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

    /// A generated notification's transaction and renewal info as an API response carries them
    /// (`transactions[].payload`, `renewalInfos[].payload`), with the fields Apple may place
    /// either way moved: `revokedSeatQuantity` to the top level, `renewalQuantity` into
    /// `multiSeatInfo`.
    private static func asAPIResponse(_ event: LedgerEvent, variant: Int) -> LedgerEvent? {
        guard case .object(var tx)? = event.decoded["transactionInfo"], case .object(var ri)? = event.decoded["renewalInfo"] else {
            return nil
        }
        if variant == 1 {
            tx["revokedSeatQuantity"] = .int(2)
            if case .object(var multi)? = tx["multiSeatInfo"] { multi["revokedSeatQuantity"] = nil; tx["multiSeatInfo"] = .object(multi) }
            if let quantity = ri.removeValue(forKey: "renewalQuantity") { ri["multiSeatInfo"] = .object(["renewalQuantity": quantity]) }
            else { ri["multiSeatInfo"] = .object(["renewalQuantity": .int(4)]) }
        }
        let decoded: JSONValue = .object([
            "transactions": .array([.object(["payload": .object(tx), "signedTransaction": "skipped"])]),
            "renewalInfos": .array([.object(["payload": .object(ri)])]),
            "apiResponse": .object(["endpoint": "GetAllSubscriptionStatuses", "status": 200, "respondedAt": .int(event.occurredAt),
                                    "path": "/inApps/v1/subscriptions/x", "body": .object([:])]),
        ])
        return LedgerEvent(position: event.position, eventId: event.eventId, kind: .apiResponse, type: "GetAllSubscriptionStatuses",
                           subtype: nil, status: 200, occurredAt: event.occurredAt, recordedAt: event.recordedAt,
                           source: event.source, origin: event.origin, raw: Data(), decoded: decoded, verification: [], hash: Data())
    }

    @Test("API responses carrying transactions and renewal infos, either placement of the seat fields: the same facts",
          arguments: [0, 1])
    func transactionsInAPIResponses(variant: Int) throws {
        var compared = 0, movedFields = 0
        for seed in UInt64(1)...6 {
            for event in StreamGenerator.stream(seed: seed, groups: 3).events {
                guard let response = Self.asAPIResponse(event, variant: variant) else { continue }
                let whole = EventFacts(response)
                #expect(!whole.transactions.isEmpty && !whole.renewals.isEmpty, "the facts read the arrays")
                if variant == 1 {
                    #expect(whole.transactions.first?.revokedSeatQuantity == 2)
                    if whole.renewals.first?.renewalQuantity != nil { movedFields += 1 }
                }
                let text = response.decoded.canonicalString()
                let pruned = EventForFacts(metadata: response, decodedText: text).parsed(pruning: EventFacts.decodedFieldsRead)
                #expect(EventFacts(pruned) == whole, "seed \(seed) event \(event.eventId) variant \(variant)")
                compared += 1
            }
        }
        #expect(compared > 20)
        if variant == 1 { #expect(movedFields == compared) }
    }

    @Test("names match as strings do: a canonically equivalent name is the same member, in any order")
    func canonicallyEquivalentNames() throws {
        let kelvin = JSONPruning.members(["K": .all])
        for text in [#"{"K":1}"#, "{\"\u{212A}\":1}", #"{"K":3}"#] {
            let whole = try JSONValue.parse(text)
            let pruned = try JSONValue.parse(text, pruning: kelvin)
            #expect(pruned["K"] == whole["K"], "\(text)")
            #expect(pruned["K"] != nil, "\(text)")
        }
        // Two spellings of one name are that name repeated: both parses refuse them.
        for text in ["{\"K\":1,\"\u{212A}\":2}", "{\"\u{212A}\":1,\"K\":2}"] {
            #expect(throws: JSONParseError.self, "\(text)") { try JSONValue.parse(text) }
            #expect(throws: JSONParseError.self, "\(text)") { try JSONValue.parse(text, pruning: kelvin) }
        }
        let accented = JSONPruning.members(["\u{E9}": .all])  // é, precomposed
        let decomposed = "{\"e\u{301}\":1,\"x\":2}"
        #expect(try JSONValue.parse(decomposed, pruning: accented)["\u{E9}"] == .int(1))
        #expect(try JSONValue.parse(decomposed, pruning: accented)["x"] == nil)
        let nonASCIIRule = JSONPruning.members(["\u{212A}": .all])
        #expect(try JSONValue.parse(#"{"K":5}"#, pruning: nonASCIIRule)["K"] == .int(5))
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

    @Test("a repeated kept member is refused, as the whole parse refuses it; the same name in a nested object is no repeat")
    func repeatedMembers() throws {
        let text = #"{"a":1,"skip":{"a":5},"a":2}"#
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text, pruning: .members(["a": .all])) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        let nested = #"{"a":1,"skip":{"a":5}}"#
        #expect(try JSONValue.parse(nested, pruning: .members(["a": .all])) == .object(["a": .int(1)]))
        #expect(try JSONValue.parse(nested)["a"] == .int(1))
    }

    @Test("escaped member names are matched by their value")
    func escapedNames() throws {
        let text = #"{"\u0061":1,"b\"":2,"c":3}"#
        #expect(try JSONValue.parse(text, pruning: .members(["a": .all, "b\"": .all])) == .object(["a": .int(1), "b\"": .int(2)]))
    }

    /// Texts with a fault (or an edge) in a part the rule leaves out; each as raw bytes.
    static let corpus: [[UInt8]] = {
        let texts: [String] = [
            #"{"keep":1,"skip":"\#u{01}"}"#,            // control character in a skipped string
            #"{"keep":1,"skip":"\x"}"#,                  // bad escape
            #"{"keep":1,"skip":"\ud800"}"#,              // unpaired surrogate
            #"{"keep":1,"skip":"\ud83d\ude00"}"#,        // a valid pair
            #"{"keep":1,"skip":{"a":}}"#,                // missing value
            #"{"keep":1,"skip":[1,]}"#,                  // trailing comma
            #"{"keep":1,"skip":{"a" 1}}"#,               // missing colon
            #"{"keep":1,"skip":{"a":1,}}"#,              // trailing comma in an object
            #"{"keep":1,"skip":01}"#,                    // leading zero
            #"{"keep":1,"skip":-}"#, #"{"keep":1,"skip":1.}"#, #"{"keep":1,"skip":1e}"#, #"{"keep":1,"skip":-0.0e+1}"#,
            #"{"keep":1,"skip":1e999}"#,                 // out of range
            #"{"keep":1,"skip":99999999999999999999}"#,  // integer out of range
            #"{"keep":1,"skip":-9223372036854775808}"#,  // the smallest Int64
            #"{"keep":1,"skip":tru}"#,                   // bad literal
            #"{"keep":1,"skip":{"unterminated":[1,2}"#,  // unterminated
            #"{"keep":1,"skip":"open"#,                  // unterminated string
            #"{"keep":1} trailing"#,                     // data after the value
            #"{"keep":1,"sk\x":1}"#,                     // bad escape in a skipped name
            #"{"keep":1,"\ud800":1}"#,                   // unpaired surrogate in a skipped name
            #"{"keep":1,"s\#u{1F}":1}"#,                 // control character in a skipped name
            #"{"keep":1,skip:1}"#,                       // unquoted name
            #"{"keep":1,"\u212A":1}"#,                   // an escaped, non-ASCII skipped name
            // Nesting: the root object is level 1, so 511 arrays inside it are the 512 allowed, and 512 one too many.
            "{\"keep\":1,\"skip\":" + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}",
            "{\"keep\":1,\"skip\":" + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}",
            "{\"keep\":1,\"skip\":" + String(repeating: "{\"a\":", count: 511) + "1" + String(repeating: "}", count: 511) + "}",
            "{\"keep\":1,\"skip\":" + String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512) + "}",
        ]
        let skippedPrefix = Array(#"{"keep":1,"skip":""#.utf8), keptPrefix = Array(#"{"keep":""#.utf8)
        return texts.map { Array($0.utf8) } + [
            skippedPrefix + [0xFF] + Array(#""}"#.utf8),                         // invalid UTF-8 in a skipped string
            Array(#"{"keep":1,""#.utf8) + [0xC3] + Array(#"":1}"#.utf8),        // a truncated sequence in a skipped name
            keptPrefix + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),              // an encoded surrogate in a kept string
        ]
    }()

    @Test("the pruned parse refuses exactly what the whole parse refuses", arguments: corpus.indices)
    func refusesWhatTheWholeParseRefuses(index: Int) throws {
        let bytes = Self.corpus[index]
        let rule = JSONPruning.members(["keep": .all])
        let whole = Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(bytes: bytes) }
        // The raw bytes through the entry the string overload uses (a Swift string cannot hold invalid UTF-8).
        let pruned = Result { () throws(JSONParseError) -> JSONValue in
            try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in try JSONTextParser.parse(buffer, pruning: rule) }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        switch (whole, pruned) {
        case (.success(let all), .success(let kept)):
            #expect(kept["keep"] == all["keep"], "\(text.prefix(80))")
        case (.failure, .failure):
            break
        default:
            Issue.record("whole parse \(whole), pruned parse \(pruned) for \(text.prefix(80))")
        }
    }

    @Test("the corpus holds texts both parses accept and texts both refuse")
    func corpusCutsBothWays() {
        let outcomes = Self.corpus.map { bytes in (try? JSONValue.parse(bytes: bytes)) != nil }
        #expect(outcomes.filter { $0 }.count >= 5)
        #expect(outcomes.filter { !$0 }.count >= 15)
    }

    @Test("valid skipped parts of every kind are accepted")
    func acceptsValidSkippedParts() throws {
        let text = #"{"skip":{"s":"a\"b\u00e9\ud83d\ude00","n":[-0.5e+3,0,-1,123456789012345678901.5],"l":[true,false,null],"o":{}},"keep":"é"}"#
        #expect(try JSONValue.parse(text, pruning: .members(["keep": .all])) == .object(["keep": .string("é")]))
    }
}
