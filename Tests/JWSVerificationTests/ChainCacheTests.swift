import AppStoreModels
import Foundation
import JWSSigning
import Synchronization
import Testing

@testable import JWSVerification

/// The validated-chain cache must never skip the date check, and `verify` must be thread-safe.
@Suite("Chain cache and concurrency")
struct ChainCacheTests {
    @Test("a cache hit still rejects a signedDate outside the chain's validity window")
    func cacheHitChecksDate() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let signer = try Fixtures.signer("expired-")

        _ = try verifier.verify(try signer.sign(payload: Fixtures.payload(signedDate: TestDates.march2024, index: 1)))
        #expect(verifier.cachedChainCount == 1)
        #expect(verifier.cacheStatistics.misses == 1 && verifier.cacheStatistics.hits == 0)

        for (index, date) in [TestDates.mid2025, TestDates.shortLeafEnd, TestDates.beforePKI].enumerated() {
            let late = try signer.sign(payload: Fixtures.payload(signedDate: date, index: 2 + index))
            let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(late) }
            #expect(error?.failure == .certificateExpired, "signedDate \(date)")
        }
        #expect(verifier.cacheStatistics.hits == 3, "the rejections came from the cached entry")
        #expect(verifier.cacheStatistics.misses == 1)

        // Still usable inside the window, and the signature is still checked on a hit.
        let ok = try signer.sign(payload: Fixtures.payload(signedDate: TestDates.march2024 + 1, index: 9))
        #expect(try verifier.verify(ok).payload["index"]?.int64Value == 9)
        let forged = Fixtures.replacingPart(2, of: ok, with: Base64URL.encode(Data(count: 64)))
        #expect(Fixtures.error { () throws(VerificationError) in try verifier.verify(forged) }?.failure == .badSignature)
        #expect(verifier.cacheStatistics.hits == 5)
    }

    /// Issue #48 finding 8: a fresh verifier said `chain_not_trusted: format error in certificate's
    /// notBefore field`, a warm one `certificate_expired … signedDate 5828963-12-20`.
    @Test("a signedDate no certificate can be checked against is signed_date_out_of_range, naming it, on a cold and a warm verifier alike",
          arguments: [183_882_168_529_000_000, Int64.max, Int64.min, 253_402_300_800_000, -62_167_219_201_000])
    func signedDateOutOfRange(milliseconds: Int64) throws {
        let signer = try Fixtures.signer()
        let jws = try signer.sign(payload: Fixtures.payload(signedDate: milliseconds, index: 1))
        let cold = try Fixtures.verifier(trusting: "root.pem")
        let warm = try Fixtures.verifier(trusting: "root.pem")
        _ = try warm.verify(try signer.sign(payload: Fixtures.payload(signedDate: TestDates.mid2025, index: 2)))
        #expect(warm.cachedChainCount == 1)
        var reasons: [String] = []
        for verifier in [cold, warm] {
            let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
            #expect(error?.failure == .signedDateOutOfRange, "\(String(describing: error))")
            #expect(error?.description.contains("signedDate \(milliseconds) (epoch milliseconds)") == true, "\(String(describing: error))")
            reasons.append(error?.description ?? "")
        }
        #expect(reasons[0] == reasons[1], "the same answer cold and warm")
        #expect(reasons[0].hasPrefix("signedDate out of range: "), "\(reasons[0])")
    }

    @Test("the last instants a certificate can express are in range: outside the chain's window, they are certificate_expired",
          arguments: [253_402_300_799_999, -62_167_219_200_000])
    func signedDateAtTheEdgeOfTheRange(milliseconds: Int64) throws {
        let signer = try Fixtures.signer()
        let jws = try signer.sign(payload: Fixtures.payload(signedDate: milliseconds))
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        #expect(Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }?.failure == .certificateExpired, "cold")
        _ = try verifier.verify(try signer.sign(payload: Fixtures.payload(signedDate: TestDates.mid2025, index: 2)))
        #expect(Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }?.failure == .certificateExpired, "warm")
    }

    @Test("the window of the main chain is bounded by every certificate, checked on hits")
    func mainChainWindow() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let signer = try Fixtures.signer()
        _ = try verifier.verify(try signer.sign(payload: Fixtures.payload(signedDate: TestDates.mid2025)))
        for date in [TestDates.beforePKI, TestDates.afterPKI] {
            let jws = try signer.sign(payload: Fixtures.payload(signedDate: date))
            #expect(Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }?.failure == .certificateExpired)
        }
        let lastSecond = try signer.sign(payload: Fixtures.payload(signedDate: TestDates.afterPKI - 1))
        #expect(Fixtures.error { () throws(VerificationError) in try verifier.verify(lastSecond) } == nil)
        #expect(verifier.cacheStatistics.hits == 3)
    }

    @Test("the cache is bounded")
    func bounded() throws {
        let verifier = try SignedPayloadVerifier(trustAnchors: try Fixtures.pkiAnchors("root.pem") + Fixtures.pkiAnchors("p256-root.pem"), cacheCapacity: 2)
        for prefix in ["", "p256-", "expired-", ""] {
            let date = prefix == "expired-" ? TestDates.march2024 : TestDates.mid2025
            _ = try verifier.verify(try Fixtures.signer(prefix).sign(payload: Fixtures.payload(signedDate: date)))
        }
        #expect(verifier.cachedChainCount == 2)
        // The first chain was evicted by the third, so the fourth verification was a miss again.
        #expect(verifier.cacheStatistics.misses == 4)
    }

    @Test("200 payloads from three chains verify concurrently")
    func concurrentVerify() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem", "p256-root.pem")
        let signers = [try Fixtures.signer(), try Fixtures.signer("p256-"), try Fixtures.signer("expired-")]
        let count = 200
        let jwsList = try (0..<count).map { index in
            let date = index % 3 == 2 ? TestDates.march2024 + Int64(index) : TestDates.mid2025 + Int64(index)
            return try signers[index % 3].sign(payload: Fixtures.payload(signedDate: date, index: index))
        }
        let succeeded = Atomic<Int>(0)
        let problems = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                let verified = try verifier.verify(jwsList[index])
                if verified.payload["index"]?.int64Value == Int64(index) {
                    succeeded.add(1, ordering: .relaxed)
                } else {
                    problems.withLock { $0.append("\(index): wrong payload") }
                }
            } catch {
                problems.withLock { $0.append("\(index): \(error)") }
            }
        }
        #expect(problems.withLock { $0 } == [])
        #expect(succeeded.load(ordering: .relaxed) == count)
        #expect(verifier.cachedChainCount == 3)
        let stats = verifier.cacheStatistics
        #expect(stats.hits + stats.misses == count)
        #expect(stats.hits >= count - 3 * 2, "at most a couple of racing misses per chain")
    }
}
