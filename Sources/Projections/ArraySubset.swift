extension Array where Index == Int {
    /// The elements that satisfy `isIncluded`, in order; the array itself (its storage shared, no
    /// element copied) when every element does.
    ///
    /// A fold filters a group's facts by `knownAt`, by effective time and by moment, and almost
    /// always keeps all of them; `filter` would copy each ``EventFacts`` (a retain and release of
    /// each of its strings and arrays) every time.
    func subset(where isIncluded: (Element) throws -> Bool) rethrows -> [Element] {
        guard let firstExcluded = try firstIndex(where: { try !isIncluded($0) }) else { return self }
        var kept = Array(self[..<firstExcluded])
        for element in self[index(after: firstExcluded)...] where try isIncluded(element) { kept.append(element) }
        return kept
    }

    /// The array sorted by `areInIncreasingOrder`; the array itself when it is sorted already.
    func sortedIfNeeded(by areInIncreasingOrder: (Element, Element) throws -> Bool) rethrows -> [Element] {
        for offset in indices.dropFirst() where try areInIncreasingOrder(self[offset], self[offset - 1]) {
            return try sorted(by: areInIncreasingOrder)
        }
        return self
    }
}
