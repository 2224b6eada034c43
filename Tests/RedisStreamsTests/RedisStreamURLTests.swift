@testable import RedisStreams
import Testing

/// `redis://` URLs: host, port, key, credentials (kept out of every message), bracketed IPv6.
@Suite("Redis stream URLs")
struct RedisStreamURLTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let text: String
        let host: String
        let port: Int
        let key: String
        let username: String?
        let password: String?
        let shown: String
        var testDescription: String { text }
    }

    @Test("parses host, port, key and credentials; shows credentials as ***", arguments: [
        Case(text: "redis://127.0.0.1:6380/s", host: "127.0.0.1", port: 6380, key: "s", username: nil, password: nil,
             shown: "redis://127.0.0.1:6380/s"),
        Case(text: "redis://queue.internal/appstore", host: "queue.internal", port: 6379, key: "appstore", username: nil, password: nil,
             shown: "redis://queue.internal:6379/appstore"),
        Case(text: "redis://:p%40ss@h:1/k", host: "h", port: 1, key: "k", username: nil, password: "p@ss", shown: "redis://***@h:1/k"),
        Case(text: "redis://reader:s3cret@h/k", host: "h", port: 6379, key: "k", username: "reader", password: "s3cret",
             shown: "redis://***@h:6379/k"),
        Case(text: "redis://[::1]:6391/k", host: "::1", port: 6391, key: "k", username: nil, password: nil, shown: "redis://[::1]:6391/k"),
        Case(text: "redis://:pw@[fe80::2]/k", host: "fe80::2", port: 6379, key: "k", username: nil, password: "pw",
             shown: "redis://***@[fe80::2]:6379/k"),
        // A password with an unencoded '/' and '@': the user information ends at the last '@' a host and key follow.
        Case(text: "redis://:Xy@secretpart/tail9@127.0.0.1:16392/ps", host: "127.0.0.1", port: 16392, key: "ps", username: nil,
             password: "Xy@secretpart/tail9", shown: "redis://***@127.0.0.1:16392/ps"),
        Case(text: "redis://alice:p/w@h:2/k", host: "h", port: 2, key: "k", username: "alice", password: "p/w", shown: "redis://***@h:2/k"),
        // A key may hold an '@' (nothing after it looks like host/key).
        Case(text: "redis://h:3/stream@1", host: "h", port: 3, key: "stream@1", username: nil, password: nil, shown: "redis://h:3/stream@1"),
    ])
    func parses(_ expected: Case) throws {
        let url = try RedisStreamURL(expected.text)
        #expect(url.host == expected.host && url.port == expected.port && url.key == expected.key)
        #expect(url.username == expected.username && url.password == expected.password)
        #expect(url.description == expected.shown)
    }

    @Test("a URL that does not parse is refused naming it without its credentials",
          arguments: ["redis://:hunter2@h:abc/k", "redis://:hunter2@h", "redis://:hunter2@/k", "redis://:hunter2@[::1]x/k",
                      "redis://:hun/ter2@h:abc/k"])
    func refusedWithoutCredentials(_ text: String) {
        do {
            _ = try RedisStreamURL(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(!error.message.contains("hun") && error.message.contains("redis://***@"), "\(error.message)")
        }
    }
}
