import EventStore
import Foundation
import LedgerStorage
import SeatLedgerService
import Testing

@Suite("api_tokens on the SQLite store")
struct TokenStoreTests {
    @Test("a ledger made before api_tokens reads no tokens and gets the table at the first add; names are unique; revoke once")
    func olderLedger() throws {
        let fixture = try LedgerFixture()
        // An older ledger: the same schema without the table (what builds before it created).
        let drop = Process()
        drop.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        drop.arguments = [fixture.path, "DROP TABLE api_tokens"]
        try drop.run()
        drop.waitUntilExit()
        #expect(drop.terminationStatus == 0)
        let store = try EventStore.open(at: fixture.path)
        let head = try store.head()
        #expect(try store.apiTokens().isEmpty)
        #expect(try !store.revokeAPIToken(name: "nobody", now: 1))
        let token = TokenAuthenticator.mintToken()
        #expect(token.hasPrefix("slt_") && token.count == 47)
        try store.addAPIToken(name: "app", scope: "read", sha256: TokenAuthenticator.digest(token), now: 10)
        #expect(throws: APITokenError.self) { try store.addAPIToken(name: "app", scope: "seats", sha256: "ab", now: 11) }
        #expect(try store.apiTokens() == [APITokenRecord(name: "app", scope: "read", sha256: TokenAuthenticator.digest(token), createdAt: 10, revokedAt: nil)])
        #expect(try store.revokeAPIToken(name: "app", now: 12))
        #expect(try !store.revokeAPIToken(name: "app", now: 13))
        #expect(try store.apiTokens().first?.revokedAt == 12)
        #expect(try store.head().position == head.position && store.head().hash == head.hash, "the log is untouched")
        #expect(try store.verifyChain(progress: nil).isIntact)
    }
}
