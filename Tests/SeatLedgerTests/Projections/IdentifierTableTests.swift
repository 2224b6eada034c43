import LedgerEvents
import Projections
@testable import SeatLedger
import Testing

@Suite("Interned identifiers for the rebuild")
struct IdentifierTableTests {
    @Test("intern gives dense ids in order of first sight; lookup and string invert it, across many growths")
    func roundTrip() {
        var table = IdentifierTable(minimumCapacity: 4)
        let identifiers = (0..<20_000).map { index in
            index % 3 == 0 ? "2000000000\(String(format: "%06d", index))" : "f3a1c0de-\(index)-4000-8000-\(index * 7)"
        }
        for (index, identifier) in identifiers.enumerated() {
            #expect(table.intern(identifier) == UInt32(index))
        }
        #expect(table.count == identifiers.count)
        for (index, identifier) in identifiers.enumerated().reversed() {
            #expect(table.intern(identifier) == UInt32(index), "interning again adds nothing")
            #expect(table.lookup(identifier) == UInt32(index))
            #expect(table.string(UInt32(index)) == identifier)
        }
        #expect(table.count == identifiers.count)
        #expect(table.lookup("absent") == nil)
        #expect(table.lookup("2000000000") == nil, "a prefix of a stored identifier is not it")
    }

    @Test("the empty string, non-ASCII text and a string and its prefix are distinct identifiers")
    func edgeCases() {
        var table = IdentifierTable()
        let a = table.intern("")
        let b = table.intern("é-ü")
        let c = table.intern("200")
        let d = table.intern("2000")
        #expect(Set([a, b, c, d]).count == 4)
        #expect(table.string(a) == "" && table.string(b) == "é-ü" && table.string(c) == "200" && table.string(d) == "2000")
        #expect(table.lookup("") == a)
    }

    @Test("the table's hash spreads sequential identifiers over the slots, and depends on every byte")
    func hashSpread() {
        // 100,000 purchaser-like ids that differ only in their last digits, into 131,072 slots:
        // a random hash fills about 70,000 distinct slots; a hash that ignored bytes would fill far fewer.
        let slots = 1 << 17
        var used = Set<Int>()
        for index in 0..<100_000 {
            var identifier = "2000000000\(String(format: "%06d", index))"
            used.insert(identifier.withUTF8 { IdentifierTable.hash($0) } & (slots - 1))
        }
        #expect(used.count > 65_000)
        // Every single-byte change of ids of every length up to 40 changes the hash.
        for length in 0...40 {
            let base = [UInt8](repeating: UInt8(ascii: "7"), count: length)
            let h = base.withUnsafeBufferPointer { IdentifierTable.hash($0) }
            for index in 0..<length {
                var changed = base
                changed[index] = UInt8(ascii: "8")
                #expect(changed.withUnsafeBufferPointer { IdentifierTable.hash($0) } != h, "length \(length), byte \(index)")
            }
            let longer = (base + [0]).withUnsafeBufferPointer { IdentifierTable.hash($0) }
            #expect(longer != h, "a trailing zero byte changes the hash (length \(length))")
        }
        var table = IdentifierTable()
        let id = table.intern("2000000000000001")
        #expect(table.lookup("2000000000000001") == id)
        let whole = Array("2000000000000001".utf8).withUnsafeBufferPointer { IdentifierTable.hash($0) }
        // The same bytes hash alike wherever they sit (joining two tables interns slices of an
        // arena), and an empty buffer hashes alike with or without an address.
        for offset in 0..<8 {
            let row = [UInt8](repeating: 0xEE, count: offset) + Array("2000000000000001".utf8) + [0xEE, 0xEE]
            row.withUnsafeBufferPointer { buffer in
                let slice = UnsafeBufferPointer(rebasing: buffer[offset..<offset + 16])
                #expect(IdentifierTable.hash(slice) == whole, "offset \(offset)")
            }
        }
        let empty = [UInt8]()
        let emptyWithAddress = empty.withUnsafeBufferPointer { IdentifierTable.hash($0) }
        #expect(IdentifierTable.hash(UnsafeBufferPointer(start: nil, count: 0)) == emptyWithAddress
                || [UInt8](repeating: 0, count: 1).withUnsafeBufferPointer { IdentifierTable.hash(UnsafeBufferPointer(rebasing: $0[0..<0])) } == emptyWithAddress)
    }

    @Test("the resolver's rules over interned ids give the same groups as over strings", arguments: [UInt64(71), 72, 73])
    func sameGroupsAsStrings(seed: UInt64) {
        let facts = StreamGenerator.stream(seed: seed, groups: 6).facts
        let expected = GroupIdentityResolver.resolve(facts)
        #expect(!expected.isEmpty)

        var table = IdentifierTable(minimumCapacity: 4)
        var evidence = IdentityEvidence<UInt32>()
        for fact in facts.shuffled() { evidence.add(fact) { table.intern($0) } }
        let groups = evidence.groups(placeholderGroupId: table.lookup(SandboxPlaceholder.groupId),
                                     placeholderMember: table.lookup(SandboxPlaceholder.memberAppTransactionId),
                                     unlinkedKey: { table.intern(GroupIdentityResolver.unlinkedKey(for: table.string($0))) })
        let interned = Dictionary(uniqueKeysWithValues: groups.values.map { group in
            (table.string(group.key), GroupMembership(group) { table.string($0) })
        })
        #expect(interned == expected)
    }
}
