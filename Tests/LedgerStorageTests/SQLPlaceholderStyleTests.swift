import LedgerStorage
import Testing

@Suite("SQL placeholders (pure)")
struct SQLPlaceholderStyleTests {
    @Test("numbered: each ? outside quotes becomes $n, in order", arguments: [
        ("SELECT 1", "SELECT 1"),
        ("SELECT a FROM t WHERE b = ?", "SELECT a FROM t WHERE b = $1"),
        ("INSERT INTO t (a, b, c) VALUES (?, ?, ?)", "INSERT INTO t (a, b, c) VALUES ($1, $2, $3)"),
        ("SELECT '?' , ? FROM t WHERE x = '??' AND y = ?", "SELECT '?' , $1 FROM t WHERE x = '??' AND y = $2"),
        ("SELECT \"odd?name\" FROM t WHERE a = ?", "SELECT \"odd?name\" FROM t WHERE a = $1"),
        ("UPDATE t SET a = coalesce(?, a) WHERE id = ? LIMIT ?", "UPDATE t SET a = coalesce($1, a) WHERE id = $2 LIMIT $3"),
        ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1"),
    ])
    func numbered(_ sql: String, _ expected: String) {
        #expect(SQLPlaceholderStyle.numbered.render(sql) == expected)
    }

    @Test("question mark: the SQL as written", arguments: ["SELECT ?", "SELECT '?', ?", "no placeholders"])
    func questionMark(_ sql: String) {
        #expect(SQLPlaceholderStyle.questionMark.render(sql) == sql)
    }

    @Test("ten or more placeholders keep counting")
    func manyPlaceholders() {
        let sql = "VALUES (" + Array(repeating: "?", count: 11).joined(separator: ", ") + ")"
        #expect(SQLPlaceholderStyle.numbered.render(sql) == "VALUES (" + (1...11).map { "$\($0)" }.joined(separator: ", ") + ")")
    }
}
