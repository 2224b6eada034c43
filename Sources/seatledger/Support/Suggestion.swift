/// "Did you mean …?" for a mistyped command, action or option.
enum Suggestion {
    /// The candidate closest to `word` by edit distance, when it is close enough to be a typo
    /// (one edit, or two in a word of six characters or more), else `nil`.
    static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best, best.distance == 1 || (best.distance == 2 && word.count >= 6) else { return nil }
        return best.candidate
    }

    /// `"; did you mean `X`?"`, or "" when nothing is close.
    static func note(for word: String, among candidates: some Sequence<String>, prefix: String = "") -> String {
        closest(to: word, among: candidates).map { "; did you mean `\(prefix)\($0)`?" } ?? ""
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit (`gropus` → `groups`).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
