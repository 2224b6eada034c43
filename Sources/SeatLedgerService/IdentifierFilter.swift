import Foundation
import SeatLedger
import Synchronization

/// Which identifiers a ledger may know, held in memory: a Bloom filter over every identifier its
/// events mention (Apple's ids, seat claim ids, member refs, the app's user ids), so a search
/// across the ledgers of a service asks the store only of the ledgers that may know an id.
///
/// A "no" is certain for the positions the filter covers: it follows the pool's head, reading
/// the identifiers of each new position (this process's appends and another's alike), so a
/// ledger appended to a moment ago may not be covered yet. Searches therefore use it only to
/// choose which ledgers to read first: an answer found there stands, and when none of them
/// knows the id every ledger is read before a 404 (``LedgerService/likelyFirst(_:identifier:)``).
/// `nil` (no opinion) until the first pass over the ledger is done.
final class IdentifierFilter: Sendable {
    private struct State {
        var bits: [UInt64]
        var inserted = 0
        var coveredThrough: Int64 = 0
        var ready = false
    }

    /// Hashes an identifier is set by (bits per identifier ≈ 16 at capacity: ~0.05% false "maybe").
    private static let hashes = 7
    private let state: Mutex<State>

    /// An empty filter sized for `capacity` identifiers (it grows by rebuilding, see ``add(_:through:)``).
    init(capacity: Int = 1 << 16) {
        state = Mutex(State(bits: [UInt64](repeating: 0, count: Self.words(for: capacity))))
    }

    private static func words(for capacity: Int) -> Int {
        var words = 1
        while words * 64 < capacity * 16 { words <<= 1 }
        return words
    }

    /// `false` when the ledger's events up to ``coveredThrough`` mention no such identifier,
    /// `true` when they may; `nil` (no opinion) before the first pass, or while the filter has not
    /// caught up with `head` (the head the pool knows: every append it acknowledged is in it, so
    /// a read after a write sees the write).
    func mightContain(_ identifier: String, head: Int64 = 0) -> Bool? {
        let (h1, h2) = Self.hash(identifier)
        return state.withLock { state -> Bool? in
            guard state.ready, state.coveredThrough >= head else { return nil }
            let mask = UInt64(state.bits.count * 64 - 1)
            for i in 0..<UInt64(Self.hashes) {
                let bit = (h1 &+ i &* h2) & mask
                if state.bits[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
            }
            return true
        }
    }

    /// Whether the first pass is in (``mightContain(_:)`` has an opinion).
    var isReady: Bool { state.withLock { $0.ready } }

    /// The last position whose identifiers are in.
    var coveredThrough: Int64 { state.withLock { $0.coveredThrough } }

    /// Adds the identifiers of the positions through `position`; `ready` once the first pass is in.
    /// Past its capacity the filter doubles and asks to be filled again from the start (`false`).
    func add(_ identifiers: [String], through position: Int64, ready: Bool) -> Bool {
        let hashed = identifiers.map(Self.hash)
        return state.withLock { state -> Bool in
            if (state.inserted + hashed.count) * 16 > state.bits.count * 64 {
                state = State(bits: [UInt64](repeating: 0, count: state.bits.count * 2))
                return false
            }
            let mask = UInt64(state.bits.count * 64 - 1)
            for (h1, h2) in hashed {
                for i in 0..<UInt64(Self.hashes) {
                    let bit = (h1 &+ i &* h2) & mask
                    state.bits[Int(bit >> 6)] |= 1 << (bit & 63)
                }
            }
            state.inserted += hashed.count
            state.coveredThrough = max(state.coveredThrough, position)
            if ready { state.ready = true }
            return true
        }
    }

    /// Two 64-bit hashes of the identifier's UTF-8 (FNV-1a, and a mix of it), for double hashing.
    private static func hash(_ identifier: String) -> (UInt64, UInt64) {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identifier.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var m = h ^ (h >> 33)
        m = m &* 0xff51_afd7_ed55_8ccd
        m ^= m >> 33
        return (h, m | 1)
    }

    /// Keeps the filter of `pool` up to date until the pool closes or the task is cancelled: the
    /// identifiers of every position up to the head, a chunk per read, then each new one.
    func follow(_ pool: LedgerPool, chunk: Int64 = 20_000) async {
        var covered: Int64 = 0
        var firstPassTarget = pool.headPosition
        while !Task.isCancelled, !pool.isClosed {
            let head = pool.headPosition
            if head > covered {
                let from = covered + 1, to = min(head, covered + chunk)
                guard let ids = try? await pool.read({ ledger in try ledger.identifierValues(from: from, through: to) }) else {
                    _ = await pool.waitForHead(after: head, timeout: .seconds(1))
                    continue
                }
                if add(ids, through: to, ready: to >= firstPassTarget) {
                    covered = to
                } else {
                    covered = 0   // grown: fill it again
                    firstPassTarget = pool.headPosition
                }
                continue
            }
            if firstPassTarget == 0 { _ = add([], through: 0, ready: true) }
            _ = await pool.waitForHead(after: covered, timeout: .seconds(5))
        }
    }
}
