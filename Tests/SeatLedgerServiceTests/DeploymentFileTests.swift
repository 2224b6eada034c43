import Foundation
@testable import SeatLedgerService
import Testing

/// `serve --config FILE`: what the file may say, and each refusal naming the file, the place and the reason.
@Suite("DeploymentFile: a serve deployment's configuration")
struct DeploymentFileTests {
    static func parse(_ text: String, environment: [String: String] = [:]) throws(DeploymentFileError) -> DeploymentFile {
        try DeploymentFile.parse(Data(text.utf8), file: "d.json", environment: environment)
    }

    @Test("every member read, ${VAR} expanded from the environment, the ledgers in the file's order")
    func full() throws {
        let file = try Self.parse("""
            {"listen": "0.0.0.0:8080", "supportListen": "8081", "supportListenPublic": true, "unroutable": "b",
             "ledgers": [{"name": "a", "db": "/var/lib/a.sqlite", "anchor": "/var/lib/a.anchor"},
                         {"name": "b", "db": "postgresql://sl:${PG_PASSWORD}@db/${APP}", "credentials": "/etc/b.json", "apiBaseURL": "http://127.0.0.1:9"}]}
            """, environment: ["PG_PASSWORD": "s3cret", "APP": "focus"])
        #expect(file.listen == "0.0.0.0:8080" && file.supportListen == "8081" && file.supportListenPublic && file.unroutable == "b")
        #expect(file.ledgers.map(\.name) == ["a", "b"])
        #expect(file.ledgers[1].db == "postgresql://sl:s3cret@db/focus")
        #expect(file.ledgers[0].anchor == "/var/lib/a.anchor" && file.ledgers[1].credentials == "/etc/b.json")
        #expect(file.ledger(named: "b")?.apiBaseURL == "http://127.0.0.1:9")
        #expect(try Self.parse(#"{"ledgers": [{"name": "a", "db": "x"}]}"#).unroutable == nil)
    }

    @Test("refusals name the place and the reason", arguments: [
        ("not json", "is not JSON"),
        ("[1]", "must be a JSON object"),
        (#"{"ledgers": []}"#, "needs \"ledgers\""),
        (#"{"ledger": [{"name": "a", "db": "x"}]}"#, "unknown member \"ledger\""),
        (#"{"ledgers": [{"name": "a", "db": "x", "dbs": "y"}]}"#, "ledgers[0]: unknown member \"dbs\""),
        (#"{"ledgers": [{"db": "x"}]}"#, "ledgers[0] needs \"name\""),
        (#"{"ledgers": [{"name": "a"}]}"#, "ledgers[0] (a) needs \"db\""),
        (#"{"ledgers": [{"name": "A b", "db": "x"}]}"#, "may hold only a-z"),
        (#"{"ledgers": [{"name": "a", "db": "x"}, {"name": "a", "db": "y"}]}"#, "the name a is used twice"),
        (#"{"ledgers": [{"name": "a", "db": "${NOPE}"}]}"#, "names ${NOPE}, which is not set"),
        (#"{"ledgers": [{"name": "a", "db": "${OPEN"}]}"#, "without a closing"),
        (#"{"unroutable": "z", "ledgers": [{"name": "a", "db": "x"}]}"#, "\"unroutable\" names z"),
        (#"{"supportListenPublic": "yes", "ledgers": [{"name": "a", "db": "x"}]}"#, "must be true or false"),
        (#"{"listen": "", "ledgers": [{"name": "a", "db": "x"}]}"#, "must be a non-empty string"),
    ] as [(String, String)])
    func refusals(_ text: String, _ reason: String) {
        #expect(throws: DeploymentFileError.self) { try Self.parse(text) }
        do {
            _ = try Self.parse(text)
        } catch {
            #expect(error.description.hasPrefix("d.json: "), "\(error)")
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test("a missing file is named")
    func missing() {
        #expect(throws: DeploymentFileError(file: "/nonexistent/d.json", message: "does not exist")) {
            try DeploymentFile.read("/nonexistent/d.json")
        }
    }
}
