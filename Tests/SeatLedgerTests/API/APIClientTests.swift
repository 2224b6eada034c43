import AppStoreAPI
import AppStoreModels
import Foundation
import JWSSigning
import LedgerStorage
import SeatLedger
import SeatLedgerAppStoreAPI
import Testing

/// A transport that answers from a script and remembers what it was sent (no network).
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [Result<HTTPResponse, TransportError>]
    private(set) var sent: [HTTPRequest] = []

    init(_ script: [Result<HTTPResponse, TransportError>]) { self.script = script }

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let next: Result<HTTPResponse, TransportError> = lock.withLock {
            sent.append(request)
            return script.isEmpty ? .failure(.failed("script exhausted")) : script.removeFirst()
        }
        return try next.get()
    }

    var requests: [HTTPRequest] { lock.withLock { sent } }
}

/// The client without a network: retry policy, recording order, tokens, credentials, guards.
@Suite("API client (no network)")
struct APIClientTests {
    static func credentials() throws -> APICredentials {
        APICredentials(issuerId: StandInKey.issuerId, keyId: StandInKey.keyId,
                       signer: try ES256Signer(contentsOf: StandInKey.privateKey), keySource: "test")
    }

    static func json(_ status: Int, _ body: JSONValue?, headers: [String: String] = [:]) -> Result<HTTPResponse, TransportError> {
        .success(HTTPResponse(status: status, headers: headers, body: body.map { $0.canonicalData() } ?? Data()))
    }

    /// A client over `transport` whose sleeps and recordings are captured.
    static func client(_ transport: ScriptedTransport, attempts: Int = 5,
                       record: @escaping (APIExchange) throws -> Void = { _ in }) throws -> (AppStoreServerAPIClient, LockedBox<[Double]>) {
        let sleeps = LockedBox<[Double]>([])
        let configuration = AppStoreAPIConfiguration(baseURL: try #require(URL(string: "https://api.example.test")), environment: .sandbox,
                                                     timeout: 5, retry: RetryPolicy(maximumAttempts: attempts))
        let client = AppStoreServerAPIClient(
            configuration: configuration, tokens: APITokenProvider(credentials: try credentials(), bundleId: TestLedger.bundleId),
            transport: transport, clock: { 1_800_000_000_000 }, sleep: { sleeps.set(sleeps.get() + [$0]) }, random: { 0.5 },
            record: record)
        return (client, sleeps)
    }

    @Test("429 waits Retry-After (bounded, with jitter); 5xx and GeneralInternalRetryableError back off; 4xx stops")
    func retryDecisions() throws {
        let policy = RetryPolicy(maximumAttempts: 4, baseDelay: 0.5, maximumDelay: 30, maximumRetryAfter: 60)
        func decide(_ status: Int?, headers: [String: String] = [:], code: Int64? = nil, attempt: Int = 1, random: Double = 0.5) -> RetryPolicy.Decision {
            policy.decide(attempt: attempt, response: status.map { HTTPResponse(status: $0, headers: headers) }, errorCode: code, random: random)
        }
        guard case .retry(let wait) = decide(429, headers: ["Retry-After": "7"]) else { Issue.record("429 not retried"); return }
        #expect(wait >= 7 && wait <= 8)
        #expect(decide(429, headers: ["Retry-After": "600"]) == .giveUp("Apple asked to retry after 600 s, more than the 60 s this client waits"))
        let date = Date().addingTimeInterval(20)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let seconds = try #require(RetryPolicy.retryAfterSeconds(formatter.string(from: date)))
        #expect(seconds > 17 && seconds <= 20)
        #expect(decide(500, attempt: 1) == .retry(after: 0.375), "equal jitter: 0.5/2 + 0.5/2 × 0.5")
        #expect(decide(503, attempt: 3, random: 1) == .retry(after: 2.0))
        #expect(RetryPolicy(maximumAttempts: 20, baseDelay: 1, maximumDelay: 4).backoff(retry: 10, random: 1) == 4, "capped")
        #expect(decide(400, code: 5_000_001) != .stop, "GeneralInternalRetryableError is retried whatever the status")
        #expect(decide(400, code: 4_000_006) == .stop)
        #expect(decide(401) == .stop)
        #expect(decide(nil) != .stop, "no response (timeout) is retried")
        #expect(decide(500, attempt: 4) == .giveUp("HTTP 500 after 4 attempts (the limit)"))
    }

    @Test("every response is recorded before the client retries or returns; retries are distinct envelopes")
    func recordsEachAttemptFirst() throws {
        let transport = ScriptedTransport([
            Self.json(429, ["errorCode": 4290000, "errorMessage": "Rate limit exceeded."], headers: ["Retry-After": "2"]),
            .failure(.timedOut(seconds: 5)),
            Self.json(503, nil),
            Self.json(200, ["totalSeatCount": 5, "availableSeatCount": 4, "assignedSeatClaimIds": []]),
        ])
        let order = LockedBox<[String]>([])
        let envelopes = LockedBox<[JSONValue]>([])
        let (client, sleeps) = try Self.client(transport) { exchange in
            order.set(order.get() + ["record \(exchange.status) after \(transport.requests.count) sent"])
            envelopes.set(envelopes.get() + [exchange.envelope])
        }
        let result = try client.send(.getSeatInfo(originalTransactionId: "2000000000000001").with(context: "memberRef", "m1"))
        #expect(result.isSuccess && result.attempts.count == 4)
        #expect(order.get() == ["record 429 after 1 sent", "record 503 after 3 sent", "record 200 after 4 sent"])
        #expect(sleeps.get().count == 3 && (sleeps.get().first ?? 0) >= 2, "Retry-After honoured: \(sleeps.get())")
        let inner = envelopes.get().compactMap { $0["apiResponse"] }
        #expect(inner.map { $0["context"]?["attempt"] } == [1, 3, 4])
        #expect(inner.allSatisfy { $0["context"]?["memberRef"] == "m1" && $0["path"] == "/groups/v1/transactions/2000000000000001/seats" })
        #expect(inner.first?["respondedAt"] == "2027-01-15T08:00:00.000Z")
        #expect(inner[1]["body"] == .null, "an empty body is recorded as null")
        #expect(Set(envelopes.get().map { $0.canonicalString() }).count == 3, "distinct events")
        #expect(!envelopes.get().map { $0.canonicalString() }.joined().contains("Bearer"), "headers are never recorded")
        let sent = transport.requests
        #expect(sent.allSatisfy { $0.headers["Authorization"]?.hasPrefix("Bearer ") == true })
        #expect(sent.first?.url.absoluteString == "https://api.example.test\(AppStoreAPIPaths.groupsPrefix)/groups/v1/transactions/2000000000000001/seats")
    }

    @Test("non-retryable errors return at once; exhausted retries give up; a recording failure stops the call")
    func stopsAndGivesUp() throws {
        let refused = ScriptedTransport([Self.json(400, ["errorCode": 4000006, "errorMessage": "Invalid transaction id."])])
        let (client, _) = try Self.client(refused)
        let result = try client.send(.getTransactionInfo(transactionId: "x"))
        #expect(!result.isSuccess && result.attempts.count == 1 && result.errorCode == 4000006)
        #expect(result.summary == "GetTransactionInfo → 400 (error 4000006: Invalid transaction id.)")

        let silent = ScriptedTransport(Array(repeating: .failure(.timedOut(seconds: 5)), count: 3))
        let (patient, _) = try Self.client(silent, attempts: 3)
        let timedOut = try patient.send(.getTransactionInfo(transactionId: "x"))
        #expect(timedOut.status == nil && timedOut.attempts.count == 3)
        #expect(timedOut.summary.contains("no response after 3 attempts") && timedOut.summary.contains("timed out"), "\(timedOut.summary)")

        struct Full: Error {}
        let once = ScriptedTransport([Self.json(500, nil), Self.json(200, [:])])
        let (failing, _) = try Self.client(once) { _ in throw Full() }
        #expect(throws: Full.self) { try failing.send(.getTransactionInfo(transactionId: "x")) }
        #expect(once.requests.count == 1, "no retry after the response could not be recorded")
    }

    @Test("the bearer token: ES256, kid, typ JWT; iss, iat, exp ≤ 60 min, aud, bid; reused until near expiry")
    func token() throws {
        let clock = LockedBox<Date>(Date(timeIntervalSince1970: 1_800_000_000))
        let provider = APITokenProvider(credentials: try Self.credentials(), bundleId: "com.example.reps", lifetime: 99_999,
                                        clock: { clock.get() })
        let token = try provider.token()
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONValue.parse(try #require(Base64URL.decode(parts[0])))
        let claims = try JSONValue.parse(try #require(Base64URL.decode(parts[1])))
        #expect(header == ["alg": "ES256", "kid": .string(StandInKey.keyId), "typ": "JWT"])
        #expect(claims == ["iss": .string(StandInKey.issuerId), "iat": 1_800_000_000, "exp": 1_800_003_600,
                           "aud": "appstoreconnect-v1", "bid": "com.example.reps"], "lifetime clamped to Apple's 60 minutes")
        #expect(Base64URL.decode(parts[2])?.count == 64)
        clock.set(Date(timeIntervalSince1970: 1_800_003_000))
        #expect(try provider.token() == token, "reused while more than a minute is left")
        clock.set(Date(timeIntervalSince1970: 1_800_003_560))
        #expect(try provider.token() != token, "renewed near expiry")
        #expect(!"\(try Self.credentials())".contains("PRIVATE"), "description is redacted")
    }

    @Test("credentials: flags beat environment beat the JSON file; missing fields are named; loose key files are warned about")
    func credentialPrecedence() throws {
        let dir = try TemporaryDirectory(label: "creds")
        let key = try dir.write(try Data(contentsOf: StandInKey.privateKey), to: "AuthKey.p8")
        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: 0o600)], ofItemAtPath: key.path)
        let file = try dir.write(#"{"issuerId": "file-issuer", "keyId": "FILEKEY", "privateKeyFile": "AuthKey.p8"}"#, to: "creds.json")
        let (fromFile, quiet) = try APICredentials.resolve(environment: [:], credentialsFile: file.path)
        #expect(fromFile.issuerId == "file-issuer" && fromFile.keyId == "FILEKEY" && fromFile.keySource == key.path)
        #expect(quiet.isEmpty)
        let (mixed, _) = try APICredentials.resolve(issuerId: "flag-issuer", environment: ["SEATLEDGER_KEY_ID": "ENVKEY"],
                                                    credentialsFile: file.path)
        #expect(mixed.issuerId == "flag-issuer" && mixed.keyId == "ENVKEY")

        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: 0o644)], ofItemAtPath: key.path)
        let (_, warnings) = try APICredentials.resolve(environment: [:], credentialsFile: file.path)
        #expect(warnings.count == 1 && warnings[0].contains("chmod 600"), "\(warnings)")

        do {
            _ = try APICredentials.resolve(issuerId: "only-issuer", environment: [:])
            Issue.record("incomplete credentials were accepted")
        } catch {
            #expect(error.message.contains("key id") && error.message.contains("private key") && !error.message.contains("issuer id ("))
        }
        let notAKey = try dir.write("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n", to: "bad.p8")
        do {
            _ = try APICredentials.resolve(issuerId: "i", keyId: "k", privateKeyFile: notAKey.path, environment: [:])
            Issue.record("a bad key was accepted")
        } catch {
            #expect(error.message.contains("bad.p8") && !error.message.contains("c2VjcmV0"), "the message never shows key material")
        }
    }

    @Test("api-config stores only the credentials file's path; backfill then finds the credentials there")
    func apiConfigCommand() throws {
        let test = try TestLedger()
        let key = try test.directory.write(try Data(contentsOf: StandInKey.privateKey), to: "AuthKey.p8")
        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: 0o600)], ofItemAtPath: key.path)
        let file = try test.directory.write(
            #"{"issuerId": "\#(StandInKey.issuerId)", "keyId": "\#(StandInKey.keyId)", "privateKeyFile": "AuthKey.p8"}"#, to: "creds.json")
        let set = try CLI.run(["api-config", "--db", test.path, "--credentials", file.path, "--json"])
        #expect(set.exitCode == 0, "\(set)")
        #expect(try set.json()["credentialsFile"] == .string(file.path))
        #expect(try set.json()["effectiveBaseURL"] == "https://api.storekit-sandbox.apple.com")
        let ledgerBytes = try Data(contentsOf: URL(fileURLWithPath: test.path))
        #expect(ledgerBytes.range(of: Data("BEGIN PRIVATE KEY".utf8)) == nil)

        let standIn = try APIStandIn(state: ["notifications": [], "now": .int(PayloadFactory.defaultSignedDate)])
        let run = try CLI.run(["backfill", "--db", test.path, "--api-base-url", standIn.baseURL, "--since", "1d", "--json"],
                              environment: ["SEATLEDGER_NOW": Timestamp.iso8601(PayloadFactory.defaultSignedDate)])
        #expect(run.exitCode == 0, "\(run)")
        #expect(try standIn.requests().first?["auth"] == "ok")

        let bad = try CLI.run(["api-config", "--db", test.path, "--credentials", test.directory.path("missing.json")])
        #expect(bad.exitCode == 2 && bad.stderr.contains("missing.json"))
        _ = try CLI.run(["api-config", "--db", test.path, "--unset-credentials"])
        let missing = try CLI.run(["backfill", "--db", test.path, "--since", "1d"])
        #expect(missing.exitCode == 2 && missing.stderr.contains("credentials incomplete"), "\(missing)")
    }

    @Test("api-config shows what a call would use: the environment's base URL and credentials over the stored ones; passwords hidden")
    func apiConfigShowsTheEffectiveSettings() throws {
        let test = try TestLedger()
        let stored = try CLI.run(["api-config", "--db", test.path, "--api-base-url", "http://user:s3cr3t@127.0.0.1:1/", "--json"])
        #expect(stored.exitCode == 0, "\(stored)")
        #expect(try stored.json()["effectiveBaseURL"] == "http://***@127.0.0.1:1/")
        #expect(try stored.json()["effectiveBaseURLSource"] == "stored")
        #expect(!stored.stdout.contains("s3cr3t"), "\(stored)")
        let environment = ["SEATLEDGER_API_BASE_URL": "http://127.0.0.1:2", "SEATLEDGER_ISSUER_ID": "i", "SEATLEDGER_KEY_ID": "k",
                           "SEATLEDGER_PRIVATE_KEY_FILE": "/nonexistent.p8"]
        let shown = try CLI.run(["api-config", "--db", test.path, "--json"], environment: environment)
        #expect(try shown.json()["effectiveBaseURL"] == "http://127.0.0.1:2")
        #expect(try shown.json()["effectiveBaseURLSource"] == "$SEATLEDGER_API_BASE_URL")
        #expect(try shown.json()["credentialsSource"] == "environment")
        let text = try CLI.run(["api-config", "--db", test.path], environment: environment)
        #expect(text.stdout.contains("Base URL:         http://127.0.0.1:2 ($SEATLEDGER_API_BASE_URL)"), "\(text)")
        #expect(text.stdout.contains("Credentials:      from the environment"), "\(text)")
        let refused = try CLI.run(["api-config", "--db", test.path, "--api-base-url", "ftp://u:s3cr3t@example.com/"])
        #expect(refused.exitCode == 2 && !refused.stderr.contains("s3cr3t") && refused.stderr.contains("ftp://***@example.com/"), "\(refused)")
        let both = try CLI.run(["api-config", "--db", test.path, "--credentials", "x.json", "--unset-credentials"])
        #expect(both.exitCode == 2 && both.stderr.contains("not both"), "\(both)")
    }

    @Test("ASSIGNED transactions are refused before any request: Extend (4030028), Send Consumption Information and Set App Account Token (4000227)")
    func assignedGuard() throws {
        let factory = try PayloadFactory()
        let assigned = TransactionPayload(json: factory.transaction(originalTransactionId: "2000000000000007", inAppOwnershipType: "ASSIGNED"))
        let purchased = TransactionPayload(json: factory.transaction())
        do {
            _ = try AssignedTransactionGuard.extendSubscriptionRenewalDate(transaction: assigned, body: ["extendByDays": 3])
            Issue.record("extension of an ASSIGNED transaction was allowed")
        } catch {
            #expect(error.errorCode == 4_030_028 && error.description.contains("AssignedSubscriptionExtensionIneligibleError")
                    && error.description.contains("purchaser's schedule"))
        }
        #expect(throws: AssignedTransactionRefusal.self) {
            try AssignedTransactionGuard.sendConsumptionInformation(transaction: assigned, body: [:])
        }
        do {
            _ = try AssignedTransactionGuard.setAppAccountToken(transaction: assigned, appAccountToken: "6b9c2a8e-3d4f-4b1a-9e7c-5f2d1a0b3c4d")
            Issue.record("Set App Account Token for an ASSIGNED transaction was allowed")
        } catch {
            #expect(error.errorCode == 4_000_227 && error.description.contains("appTransactionId"))
        }
        let call = try AssignedTransactionGuard.setAppAccountToken(transaction: purchased, appAccountToken: "6b9c2a8e-3d4f-4b1a-9e7c-5f2d1a0b3c4d")
        #expect(call.relativePath == "/v1/transactions/2000000000000001/appAccountToken")

        // The ledger-backed guard: reads the verified transaction, refuses ASSIGNED and unknown ones.
        let test = try TestLedger()
        try test.append(line: try factory.notification(uuid: "member", transaction: factory.transaction(
            originalTransactionId: "2000000000000007", appTransactionId: "705000000000000007", inAppOwnershipType: "ASSIGNED")))
        #expect(throws: AssignedTransactionRefusal.self) {
            try test.ledger.transactionForGuardedCall(AssignedTransactionGuard.extendSubscriptionRenewalDate, transactionId: "2000000000000007")
        }
        #expect(throws: APIUsageError.self) {
            try test.ledger.transactionForGuardedCall(AssignedTransactionGuard.setAppAccountToken, transactionId: "2000000000000404")
        }
        let transport = ScriptedTransport([])
        let (client, _) = try Self.client(transport)
        #expect(throws: (any Error).self) {
            let transaction = try test.ledger.transactionForGuardedCall(AssignedTransactionGuard.sendConsumptionInformation,
                                                                        transactionId: "2000000000000007")
            _ = try client.send(try AssignedTransactionGuard.sendConsumptionInformation(transaction: transaction, body: [:]))
        }
        #expect(transport.requests.isEmpty, "nothing was sent")
    }

    @Test("the backfill cursor merges windows and finds the gaps")
    func cursorWindows() {
        typealias W = BackfillCursor.ClosedWindow
        #expect(BackfillCursor.merge([W(start: 5, end: 9), W(start: 0, end: 3), W(start: 3, end: 4), W(start: 8, end: 12)])
                == [W(start: 0, end: 4), W(start: 5, end: 12)])
        #expect(BackfillCursor.gaps(start: 0, end: 20, covered: [W(start: 2, end: 4), W(start: 10, end: 25)])
                == [W(start: 0, end: 2), W(start: 4, end: 10)])
        #expect(BackfillCursor.gaps(start: 3, end: 9, covered: [W(start: 0, end: 10)]).isEmpty)
        var cursor = BackfillCursor()
        cursor.coveredAll = [W(start: 1, end: 2)]
        cursor.coveredFailures = [W(start: 2, end: 5)]
        cursor.inProgress = .init(startDate: 7, endDate: 9, onlyFailures: false, paginationToken: "t", pages: 2)
        #expect(BackfillCursor(json: cursor.json) == cursor)
        #expect(cursor.covered(onlyFailures: true) == [W(start: 1, end: 5)])
        #expect(cursor.covered(onlyFailures: false) == [W(start: 1, end: 2)])
    }
}
