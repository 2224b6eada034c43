/// A map from an identifier to one or more identifiers, cheap in the common case of exactly one
/// (the second and later values go to a small overflow map).
struct IdentifierSets<ID: Hashable & Sendable>: Sendable {
    private var first: [ID: ID] = [:]
    private var more: [ID: [ID]] = [:]

    /// Adds `value` under `key` (once).
    mutating func insert(_ value: ID, for key: ID) {
        guard let existing = first[key] else {
            first[key] = value
            return
        }
        guard existing != value, !(more[key]?.contains(value) ?? false) else { return }
        more[key, default: []].append(value)
    }

    /// Every value under `key`, in no particular order.
    func values(for key: ID) -> [ID] {
        guard let head = first[key] else { return [] }
        return [head] + (more[key] ?? [])
    }

    /// Adds every (key, value) pair of `other`, its identifiers turned into this set's by `map`.
    mutating func insertAll<Other>(_ other: IdentifierSets<Other>, mapping map: (Other) -> ID) {
        other.forEach { key, value in insert(map(value), for: map(key)) }
    }

    /// Calls `body` with every (key, value) pair.
    func forEach(_ body: (ID, ID) -> Void) {
        for (key, value) in first { body(key, value) }
        for (key, values) in more { for value in values { body(key, value) } }
    }
}
