import COpenSSL
import Dispatch
import Foundation
import JWSVerification

/// Raw ES256 signature verifications per second through OpenSSL, the way
/// `JWSVerification.PublicKey.verifyES256` does one (raw R‖S → DER `ECDSA-Sig-Value`, a fresh
/// `EVP_MD_CTX`, `EVP_DigestVerifyInit` with SHA-256 and the leaf key, `EVP_DigestVerify` over the
/// JWS signing input), over the very JWS of the benchmark stream (outer notification + nested
/// transaction + renewal info), with no chain validation, JSON or storage: the ceiling ingest can
/// approach. Runs one worker per core (`DispatchQueue.concurrentPerform`) for a fixed time.
///
/// It then times SeatLedger's own check of the same JWS (`SignedPayloadVerifier.verify`, as
/// ingest calls it: base64url, header and chain caches, payload JSON, and the signature through
/// `EVP_PKEY_verify` on a reused context): `jws_verifies_per_s`; the report also gives the ingest
/// as a fraction of it, the bound of this implementation.
enum ES256Bench {
    struct Sample {
        let signingInput: [UInt8]
        let rawSignature: [UInt8]
        let compact: String
    }

    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--input", "--pki", "--seconds", "--sample-lines", "--threads"])
        let input = try options.string("--input")
        let pki = try options.string("--pki")
        let seconds = try options.double("--seconds", default: 3)
        let sampleLines = try options.int("--sample-lines", default: 1000)
        let threads = try options.int("--threads", default: ProcessInfo.processInfo.activeProcessorCount)

        let key = try leafKey(pemPath: pki + "/leaf.pem")
        defer { EVP_PKEY_free(key) }
        let samples = try loadSamples(path: input, lines: sampleLines)
        guard !samples.isEmpty else { throw BenchError("no JWS found in \(input)") }
        let md = EVP_MD_fetch(nil, "SHA256", nil)
        defer { EVP_MD_free(md) }
        let handles = Handles(key: key, md: md)

        // Every sample must verify (otherwise we would be timing failures).
        for sample in samples where !verify(sample, handles) {
            throw BenchError("a sample JWS does not verify with \(pki)/leaf.pem: is the stream signed with this PKI?")
        }

        let single = measure(samples, handles, threads: 1, seconds: max(0.2, seconds / 3))
        let all = measure(samples, handles, threads: threads, seconds: seconds)
        let verifier = try SignedPayloadVerifier(trustAnchors: TrustAnchor.load(contentsOf: URL(fileURLWithPath: pki + "/root.pem")))
        for sample in samples {
            do { _ = try verifier.verify(sample.compact) } catch { throw BenchError("SignedPayloadVerifier refused a sample JWS: \(error)") }
        }
        let jws = measureVerifier(samples, verifier, threads: threads, seconds: seconds)
        let averageInput = Double(samples.reduce(0) { $0 + $1.signingInput.count }) / Double(samples.count)
        try emit([
            "es256_verifies_per_s": round(all, 0),
            "es256_verifies_per_s_one_core": round(single, 0),
            "jws_verifies_per_s": round(jws, 0),
            "es256_threads": threads,
            "es256_samples": samples.count,
            "es256_avg_signing_input_bytes": round(averageInput, 0),
            "openssl": String(cString: OpenSSL_version(Int32(OPENSSL_VERSION))),
        ])
    }

    /// Unsafe pointers shared read-only by the workers (OpenSSL 3 allows concurrent verification
    /// with one EVP_PKEY and one EVP_MD, each call using its own EVP_MD_CTX).
    struct Handles: @unchecked Sendable {
        let key: OpaquePointer
        let md: OpaquePointer?
    }

    /// Raw ES256 verifications per second with `threads` workers for about `seconds`.
    static func measure(_ samples: [Sample], _ handles: Handles, threads: Int, seconds: Double) -> Double {
        rate(count: samples.count, threads: threads, seconds: seconds) { verify(samples[$0], handles) }
    }

    /// Full JWS verifications per second through SeatLedger's verifier with `threads` workers.
    static func measureVerifier(_ samples: [Sample], _ verifier: SignedPayloadVerifier, threads: Int, seconds: Double) -> Double {
        rate(count: samples.count, threads: threads, seconds: seconds) { (try? verifier.verify(samples[$0].compact)) != nil }
    }

    /// Calls of `check` (on sample indices, round robin) per second with `threads` workers for
    /// about `seconds`; every call must succeed.
    static func rate(count: Int, threads: Int, seconds: Double, _ check: @escaping @Sendable (Int) -> Bool) -> Double {
        let counts = Counters(threads)
        let started = now()
        let deadline = started + seconds
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            var done = 0
            var index = worker * 7919 % count
            while true {
                for _ in 0..<64 {
                    if !check(index) { fatalError("verification failed during the run") }
                    index += 1
                    if index == count { index = 0 }
                }
                done += 64
                if now() >= deadline { break }
            }
            counts.set(worker, done)
        }
        return Double(counts.total) / (now() - started)
    }

    final class Counters: @unchecked Sendable {
        // Each worker writes only its own slot; read after concurrentPerform returns.
        private var slots: [Int]
        init(_ count: Int) { slots = Array(repeating: 0, count: count) }
        func set(_ index: Int, _ value: Int) { slots.withUnsafeMutableBufferPointer { $0[index] = value } }
        var total: Int { slots.reduce(0, +) }
    }

    static func verify(_ sample: Sample, _ handles: Handles) -> Bool {
        guard let der = derSignature(sample.rawSignature) else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, handles.md, nil, handles.key) == 1 else { return false }
        let result = der.withUnsafeBufferPointer { sig in
            sample.signingInput.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    static func derSignature(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBufferPointer { ($0.baseAddress.flatMap { BN_bin2bn($0, 32, nil) },
                                                    $0.baseAddress.flatMap { BN_bin2bn($0 + 32, 32, nil) }) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else { return nil }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }

    static func leafKey(pemPath: String) throws -> OpaquePointer {
        let pem = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pemPath)))
        // The BIO reads the buffer in place: parse inside the closure that keeps it alive.
        let parsed: OpaquePointer? = pem.withUnsafeBufferPointer { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        guard let certificate = parsed else { throw BenchError("\(pemPath) is not a PEM certificate") }
        defer { X509_free(certificate) }
        guard let key = X509_get_pubkey(certificate) else { throw BenchError("no public key in \(pemPath)") }
        return key
    }

    /// The outer JWS of the first `lines` notification lines and their nested JWS.
    static func loadSamples(path: String, lines: Int) throws -> [Sample] {
        let file = try LineFile(path: path)
        var samples: [Sample] = []
        var read = 0
        while read < lines, let line = file.next() {
            read += 1
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                  let outer = object["signedPayload"] as? String else { continue }
            var jws = [outer]
            if let payload = decodePayload(outer), let data = payload["data"] as? [String: Any] {
                for key in ["signedTransactionInfo", "signedRenewalInfo"] {
                    if let nested = data[key] as? String { jws.append(nested) }
                }
            }
            for compact in jws {
                let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
                guard parts.count == 3, let signature = base64URL(parts[2]) else { continue }
                samples.append(Sample(signingInput: Array((parts[0] + "." + parts[1]).utf8), rawSignature: signature, compact: compact))
            }
        }
        return samples
    }

    static func decodePayload(_ compact: String) -> [String: Any]? {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = base64URL(parts[1]) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    static func base64URL(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
