import Foundation

/// Interned identifiers for a whole-ledger rebuild: each distinct identifier stored once in one
/// byte arena and named by a dense `UInt32` (0, 1, 2, … in order of first sight).
///
/// A ledger of a million events mentions over a million identifiers. As `String`s in several
/// maps, each costs a heap object per copy (every decoded event brings its own copies) and a
/// 16-byte key per map entry. Here an identifier costs its UTF-8 bytes, an offset and a hash
/// slot, and the maps that use it hold 4-byte ids.
///
/// Built on one thread with ``intern(_:)``; a finished table is a value that any number of
/// threads read (``lookup(_:)``, ``string(_:)``). Identifiers are compared as UTF-8 bytes, not
/// by Unicode canonical equivalence as `String ==` would: Apple's identifiers are ASCII.
///
/// ```swift
/// var table = IdentifierTable()
/// let id = table.intern("2000000000000001")   // 0
/// table.intern("2000000000000001") == id      // true
/// table.lookup("2000000000000001") == id      // true
/// table.string(id)                            // "2000000000000001"
/// ```
struct IdentifierTable: Sendable {
    /// The UTF-8 bytes of every identifier, back to back.
    private var arena: [UInt8] = []
    /// The end offset in `arena` of each identifier (it starts where the previous one ends).
    private var ends: [Int] = []
    /// Open addressing, linear probing, at most half full: 0 is empty, otherwise id + 1.
    private var slots: [UInt32]

    /// How many distinct identifiers the table holds.
    var count: Int { ends.count }

    /// An empty table with room for about `minimumCapacity` identifiers before it grows.
    init(minimumCapacity: Int = 4_096) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity *= 2 }
        slots = [UInt32](repeating: 0, count: capacity)
    }

    /// The id of `identifier`, adding it if it is new.
    mutating func intern(_ identifier: String) -> UInt32 {
        var identifier = identifier
        return identifier.withUTF8 { intern(bytes: $0) }
    }

    /// The id of `identifier`, or `nil` if the table does not hold it.
    func lookup(_ identifier: String) -> UInt32? {
        var identifier = identifier
        return identifier.withUTF8 { probe($0, hash: Self.hash($0)).id }
    }

    /// The identifier named by `id` (an id this table returned).
    func string(_ id: UInt32) -> String {
        let range = self.range(Int(id))
        return arena.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Interns every identifier of `other`, in the order of its ids; returns, for each id of
    /// `other`, the id of the same identifier here (for joining tables built on two threads).
    mutating func absorb(_ other: IdentifierTable) -> [UInt32] {
        var ids: [UInt32] = []
        ids.reserveCapacity(other.count)
        other.arena.withUnsafeBufferPointer { arena in
            for id in 0..<other.count { ids.append(intern(bytes: UnsafeBufferPointer(rebasing: arena[other.range(id)]))) }
        }
        return ids
    }

    // MARK: Internals

    /// The id of the identifier whose UTF-8 bytes are `bytes`, adding it if it is new.
    private mutating func intern(bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        if (count + 1) * 2 > slots.count { grow() }
        let (slot, found) = probe(bytes, hash: Self.hash(bytes))
        if let found { return found }
        precondition(count < Int(UInt32.max), "more than 4,294,967,295 distinct identifiers")
        let id = UInt32(count)
        arena.append(contentsOf: bytes)
        ends.append(arena.count)
        slots[slot] = id + 1
        return id
    }

    /// The slot holding `bytes` and its id, or the empty slot where it would go and `nil`.
    private func probe(_ bytes: UnsafeBufferPointer<UInt8>, hash: Int) -> (slot: Int, id: UInt32?) {
        let mask = slots.count - 1
        var slot = hash & mask
        return arena.withUnsafeBufferPointer { arena in
            while true {
                let entry = slots[slot]
                if entry == 0 { return (slot, nil) }
                let id = Int(entry - 1)
                let range = self.range(id)
                if range.count == bytes.count
                    && (bytes.isEmpty || memcmp(arena.baseAddress! + range.lowerBound, bytes.baseAddress!, bytes.count) == 0) {
                    return (slot, UInt32(id))
                }
                slot = (slot + 1) & mask
            }
        }
    }

    private func range(_ id: Int) -> Range<Int> { (id == 0 ? 0 : ends[id - 1])..<ends[id] }

    private mutating func grow() {
        let capacity = slots.count * 2
        let mask = capacity - 1
        var grown = [UInt32](repeating: 0, count: capacity)
        arena.withUnsafeBufferPointer { arena in
            for id in 0..<count {
                var slot = Self.hash(UnsafeBufferPointer(rebasing: arena[range(id)])) & mask
                while grown[slot] != 0 { slot = (slot + 1) & mask }
                grown[slot] = UInt32(id + 1)
            }
        }
        slots = grown
    }

    /// A fast 64-bit hash of the bytes (eight at a time: multiply, rotate, final mix), seeded
    /// per process.
    ///
    /// Not `Hasher`: SipHash cost a third of the identity pass. Most identifiers come from
    /// payloads Apple signed, but some do not (a claim's `appTransactionId` is the caller's input,
    /// path ids and group members come from API responses), so the seed is random: nobody can
    /// prepare identifiers that collide. Colliding identifiers would only make the table slower,
    /// never wrong.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = (seed ^ UInt64(truncatingIfNeeded: bytes.count)) &* multiplier
        var offset = 0
        if let base = bytes.baseAddress {  // (an empty buffer may have none)
            let raw = UnsafeRawPointer(base)
            while offset + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                h = ((h ^ word) &* multiplier).rotatedLeft(by: 29)
                offset += 8
            }
        }
        if offset < bytes.count {
            var tail: UInt64 = 0
            for index in offset..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
            h = ((h ^ tail) &* multiplier).rotatedLeft(by: 29)
        }
        // Final mix (murmur3's fmix64), so that the low bits used as the slot depend on every byte.
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h)
    }

    /// The hash's seed, drawn once per process.
    private static let seed = UInt64.random(in: .min ... .max)
}

private extension UInt64 {
    /// The bits rotated left by `count` (0 < count < 64).
    func rotatedLeft(by count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
