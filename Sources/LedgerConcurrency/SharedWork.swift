import Dispatch
import Synchronization

/// A batch of items that several threads work through together, one item at a time, with the
/// results kept in input order.
///
/// Each thread that calls ``work(_:)`` claims the next unclaimed index from an atomic counter,
/// transforms that item and stores its result in the index's slot, until none is left; so items of
/// different cost balance across the threads, and a thread that arrives late (or after the work is
/// all claimed) returns at once. ``finish(_:)`` helps with what is left, waits for the threads still
/// transforming their last item, and moves the results out.
///
/// `@unchecked Sendable` is safe (this is the kit's one shared buffer, audited here):
/// - the slots are allocated once with `items.count` entries and never resized;
/// - each slot is written exactly once, by the one thread that claimed its index (the counter
///   hands every index out once), so no two threads touch the same memory;
/// - the slots are read only by ``finish(_:)``, after `remaining` reached zero: every writer
///   decrements it with acquire-release ordering after its store, and the `done` result that the
///   last one sets is awaited under a lock, so every write happens-before the read;
/// - ``finish(_:)`` runs once (checked with an atomic flag), and `deinit` frees only the slots it
///   did not move out.
public final class SharedWork<Item: Sendable, Output: Sendable>: @unchecked Sendable {
    private let items: [Item]
    private let slots: UnsafeMutablePointer<Output>
    private let next = Atomic<Int>(0)
    private let remaining: Atomic<Int>
    private let done = OneShot<Void>()
    private let collected = Atomic<Bool>(false)

    /// Work over `items`, none claimed yet.
    public init(_ items: [Item]) {
        self.items = items
        slots = .allocate(capacity: max(1, items.count))
        remaining = Atomic(items.count)
        if items.isEmpty { done.set(()) }
    }

    deinit {
        // Before `finish` moved them out, only the claimed-and-stored slots hold values; a batch
        // is always finished by its owner, so this frees memory only.
        if !collected.load(ordering: .acquiring) {
            let stored = items.count - remaining.load(ordering: .acquiring)
            if stored == items.count { slots.deinitialize(count: items.count) }
        }
        slots.deallocate()
    }

    /// How many items there are.
    public var count: Int { items.count }

    /// Whether some item has not been claimed by any thread yet.
    public var hasUnclaimed: Bool { next.load(ordering: .relaxed) < items.count }

    /// Transforms unclaimed items, one at a time, until none is left to claim.
    public func work(_ transform: (Item) -> Output) {
        while true {
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < items.count else { return }
            (slots + index).initialize(to: transform(items[index]))
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.set(()) }
        }
    }

    /// Helps with what is left, waits until every item is transformed, and returns the results
    /// in input order. Called once, by the batch's owner.
    public func finish(_ transform: (Item) -> Output) -> [Output] {
        precondition(!collected.exchange(true, ordering: .acquiringAndReleasing), "a SharedWork is finished once")
        work(transform)
        done.wait()
        let count = items.count
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { buffer.baseAddress!.moveInitialize(from: slots, count: count) }
            initialized = count
        }
    }
}
