import EventStore
import Foundation
import HTTPTestSupport
import LedgerStorage
import SeatLedger
import Testing

/// `serve --anchor FILE` through the binary: the anchor follows the head after every commit, and a
/// ledger that no longer holds the anchored head is refused at start (issue 23, tamper evidence).
@Suite("seatledger serve --anchor (a real process)", .serialized)
struct ServeAnchorTests {
    /// The anchor file's first line: position and head hash (the record chain's head and the
    /// trust digest follow on lines of their own).
    static func anchorLine(_ file: String) -> String? {
        (try? String(contentsOfFile: file, encoding: .utf8))?.split(separator: "\n").first.map(String.init)
    }

    /// The ledger's head as an anchor line.
    static func headLine(_ db: String) throws -> String {
        let head = try EventStore.open(at: db, readOnly: true).head()
        return "\(head.position) \(head.hash.map { String(format: "%02x", $0) }.joined())"
    }

    @Test("the anchor follows each acknowledged append; a rewritten anchor makes serve refuse to start (exit 2)")
    func anchorFollowsAndRefuses() throws {
        let fixture = try LedgerFixture()
        let anchor = fixture.directory.appendingPathComponent("head.anchor").path
        let bodies = try Notifications.subscribed(count: 2)
        let serve = try ServeProcess(db: fixture.path, extra: ["--anchor", anchor])
        let client = try RawHTTPClient(port: serve.port)
        for (index, body) in bodies.enumerated() {
            #expect(try client.request("POST", "/notifications", body: body).status == 200)
            let expected = try Self.headLine(fixture.path)
            #expect(expected.hasPrefix("\(index + 1) "))
            #expect(waitUntil(timeout: .seconds(10)) { Self.anchorLine(anchor) == expected }, "anchor \(Self.anchorLine(anchor) ?? "none")")
        }
        #expect(serve.stop() == 0)

        // An anchor naming a head this ledger does not hold (as after a truncated or re-hashed log).
        try "2 \(String(repeating: "ab", count: 32))\n".write(toFile: anchor, atomically: true, encoding: .utf8)
        let refused = try CLIRun.run(["serve", "--db", fixture.path, "--listen", "127.0.0.1:0", "--anchor", anchor])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("refusing to serve"), "\(refused.stderr)")
    }
}
