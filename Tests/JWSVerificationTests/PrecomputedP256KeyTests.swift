import COpenSSL
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import JWSVerification

/// How many marked `EVP_PKEY`s OpenSSL has freed (see ``PrecomputedP256KeyTests/freesItsKey()``).
private let freedKeyMarkers = Atomic<Int>(0)

/// An ex-data slot on `EVP_PKEY` whose free callback counts marked keys as they are destroyed.
private let freedKeyIndex: Int32 = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_EVP_PKEY, 0, nil, nil, nil) { _, pointer, _, _, _, _ in
    if pointer == UnsafeMutableRawPointer(bitPattern: 0x5EA7) { freedKeyMarkers.add(1, ordering: .relaxed) }
}

/// The table-driven ES256 check (``PrecomputedP256Key``) agrees with `EVP_PKEY_verify` on every
/// kind of signature: valid, high-S, tampered, out of range, from another key.
@Suite("Precomputed P-256 key")
struct PrecomputedP256KeyTests {
    /// A fresh P-256 key pair, as an `EVP_PKEY*` with a private key, owned by the caller.
    final class KeyPair: @unchecked Sendable {
        // @unchecked Sendable: the key is only read after init (signing and public-key copies).
        let pointer: OpaquePointer

        init() throws {
            let context = try #require(EVP_PKEY_CTX_new_from_name(nil, "EC", nil))
            defer { EVP_PKEY_CTX_free(context) }
            #expect(EVP_PKEY_keygen_init(context) == 1)
            #expect(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1)
            var key: OpaquePointer?
            #expect(EVP_PKEY_generate(context, &key) == 1)
            pointer = try #require(key)
        }

        deinit { EVP_PKEY_free(pointer) }

        /// A ``PublicKey`` sharing this key: `precomputeAfter` `nil` checks with OpenSSL only, `0`
        /// builds the table on the first verification.
        func publicKey(precomputeAfter: Int?) -> PublicKey {
            EVP_PKEY_up_ref(pointer)
            return PublicKey(owning: pointer, precomputeAfter: precomputeAfter)
        }

        /// The raw 64-byte `R‖S` ES256 signature of `message`.
        func sign(_ message: [UInt8]) throws -> [UInt8] {
            let context = try #require(EVP_MD_CTX_new())
            defer { EVP_MD_CTX_free(context) }
            #expect(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1)
            var der = [UInt8](repeating: 0, count: 80)
            var length = der.count
            #expect(EVP_DigestSign(context, &der, &length, message, message.count) == 1)
            let signature = try #require(der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var start = buffer.baseAddress
                return d2i_ECDSA_SIG(nil, &start, length)
            })
            defer { ECDSA_SIG_free(signature) }
            var raw = [UInt8](repeating: 0, count: 64)
            raw.withUnsafeMutableBufferPointer { buffer in
                _ = BN_bn2binpad(ECDSA_SIG_get0_r(signature), buffer.baseAddress, 32)
                _ = BN_bn2binpad(ECDSA_SIG_get0_s(signature), buffer.baseAddress.map { $0 + 32 }, 32)
            }
            return raw
        }
    }

    /// P-256's group order `n`, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// `a - b` for 32-byte big-endian numbers with `a >= b`.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var digit = Int(a[index]) - Int(b[index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            result[index] = UInt8(digit)
        }
        return result
    }

    /// `a + b` for 32-byte big-endian numbers, `nil` if the sum does not fit in 32 bytes.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8]? {
        var result = [UInt8](repeating: 0, count: 32)
        var carry = 0
        for index in stride(from: 31, through: 0, by: -1) {
            let digit = Int(a[index]) + Int(b[index]) + carry
            result[index] = UInt8(digit & 0xFF)
            carry = digit >> 8
        }
        return carry == 0 ? result : nil
    }

    /// What the two checks say about one (signature, message) pair; they must agree.
    private func verdicts(_ signature: [UInt8], _ message: [UInt8], table: PublicKey, plain: PublicKey) -> (table: Bool, plain: Bool) {
        let fast = signature.withUnsafeBytes { sig in message.withUnsafeBytes { table.verifyES256(signature: sig, message: $0) } }
        let slow = signature.withUnsafeBytes { sig in message.withUnsafeBytes { plain.verifyES256(signature: sig, message: $0) } }
        return (fast, slow)
    }

    @Test("valid and high-S signatures verify; tampered messages and signatures do not; both checks agree")
    func agreesWithOpenSSL() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            let pair = try KeyPair()
            let table = pair.publicKey(precomputeAfter: 0)
            let plain = pair.publicKey(precomputeAfter: nil)
            for round in 0..<60 {
                let message = (0..<(1 + round * 37)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let signature = try pair.sign(message)
                #expect(verdicts(signature, message, table: table, plain: plain) == (true, true))
                // The other S of the same point (n - s): ECDSA accepts both, and so does OpenSSL.
                let highS = Array(signature[0..<32]) + Self.subtract(Self.order, Array(signature[32...]))
                #expect(verdicts(highS, message, table: table, plain: plain) == (true, true))
                var tamperedMessage = message
                tamperedMessage[Int.random(in: 0..<message.count, using: &generator)] ^= 0x01
                #expect(verdicts(signature, tamperedMessage, table: table, plain: plain) == (false, false))
                var tamperedSignature = signature
                tamperedSignature[Int.random(in: 0..<64, using: &generator)] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
                #expect(verdicts(tamperedSignature, message, table: table, plain: plain) == (false, false))
            }
            #expect(table.usesPrecomputedTable)
            #expect(!plain.usesPrecomputedTable)
        }
    }

    @Test("r or s of zero, of n, or above n is refused by both checks")
    func outOfRange() throws {
        let pair = try KeyPair()
        let table = pair.publicKey(precomputeAfter: 0)
        let plain = pair.publicKey(precomputeAfter: nil)
        let message = Array("header.payload".utf8)
        let signature = try pair.sign(message)
        let r = Array(signature[0..<32]), s = Array(signature[32...])
        let zero = [UInt8](repeating: 0, count: 32), ones = [UInt8](repeating: 0xFF, count: 32)
        var cases: [[UInt8]] = [zero + s, r + zero, Self.order + s, r + Self.order, ones + s, r + ones, zero + zero]
        // r + n and s + n name the same residues as r and s, but are out of range and must fail.
        if let big = Self.add(r, Self.order) { cases.append(big + s) }
        if let big = Self.add(s, Self.order) { cases.append(r + big) }
        for candidate in cases {
            #expect(verdicts(candidate, message, table: table, plain: plain) == (false, false))
        }
        #expect(verdicts(signature, message, table: table, plain: plain) == (true, true))
        #expect(table.usesPrecomputedTable)
    }

    /// A valid signature made with the private key `d` for a chosen digest or a chosen `s`:
    /// a random `k`, `r = x(kG) mod n`, then `s = k⁻¹(e + r·d)` for a given `e`, or, for a given
    /// `s`, the digest `e = s·k - r·d` it signs. Returns 32-byte big-endian `e`, `r`, `s`.
    private func signature(_ pair: KeyPair, digest chosenDigest: [UInt8]? = nil, s chosenS: UInt = 5) throws -> (digest: [UInt8], r: [UInt8], s: [UInt8]) {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        defer { EC_GROUP_free(group) }
        let context = try #require(BN_CTX_new())
        defer { BN_CTX_free(context) }
        let order = try #require(EC_GROUP_get0_order(group))
        var privateKey: OpaquePointer?
        #expect(EVP_PKEY_get_bn_param(pair.pointer, "priv", &privateKey) == 1)
        let d = try #require(privateKey)
        let (k, r, s, e, product) = (BN_new(), BN_new(), BN_new(), BN_new(), BN_new())
        defer { for number in [d, k, r, s, e, product] { BN_free(number) } }
        let point = try #require(EC_POINT_new(group))
        defer { EC_POINT_free(point) }
        #expect(BN_rand_range(k, order) == 1)
        #expect(EC_POINT_mul(group, point, k, nil, nil, context) == 1)
        #expect(EC_POINT_get_affine_coordinates(group, point, r, nil, context) == 1)
        #expect(BN_nnmod(r, r, order, context) == 1)
        #expect(BN_mod_mul(product, r, d, order, context) == 1)
        if let chosenDigest {
            #expect(BN_bin2bn(chosenDigest, 32, e) != nil)
            let inverse = try #require(BN_mod_inverse(nil, k, order, context))
            defer { BN_free(inverse) }
            #expect(BN_mod_add(s, e, product, order, context) == 1)
            #expect(BN_mod_mul(s, s, inverse, order, context) == 1)
        } else {
            #expect(BN_set_word(s, chosenS) == 1)
            #expect(BN_mod_mul(e, s, k, order, context) == 1)
            #expect(BN_mod_sub(e, e, product, order, context) == 1)
        }
        func bytes(_ number: OpaquePointer?) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            _ = out.withUnsafeMutableBufferPointer { BN_bn2binpad(number, $0.baseAddress, 32) }
            return out
        }
        return (chosenDigest ?? bytes(e), bytes(r), bytes(s))
    }

    /// `EVP_PKEY_verify` of a raw signature over a digest.
    private func openSSLVerifies(_ pair: KeyPair, digest: [UInt8], raw: [UInt8]) throws -> Bool {
        var der = [UInt8](repeating: 0, count: ES256Signature.maximumDERLength)
        let length = raw.withUnsafeBytes { input in der.withUnsafeMutableBytes { ES256Signature.der(fromRaw: input, into: $0) } }
        let context = try #require(EVP_PKEY_CTX_new(pair.pointer, nil))
        defer { EVP_PKEY_CTX_free(context) }
        #expect(EVP_PKEY_verify_init(context) == 1)
        let verdict = EVP_PKEY_verify(context, der, length, digest, digest.count) == 1
        _ = drainOpenSSLErrors()
        return verdict
    }

    @Test("s + n, the same residue as a valid s, is refused by the range check, as OpenSSL does")
    func sPlusOrderIsRefused() throws {
        let pair = try KeyPair()
        let table = try #require(PrecomputedP256Key(publicKey: pair.pointer))
        for _ in 0..<5 {
            let (digest, r, s) = try signature(pair, s: 5)
            let bigS = try #require(Self.add(s, Self.order))
            func fast(_ raw: [UInt8]) -> Bool {
                raw.withUnsafeBytes { sig in digest.withUnsafeBytes { table.verify(signature: sig, digest: $0) } }
            }
            #expect(fast(r + s))
            #expect(try openSSLVerifies(pair, digest: digest, raw: r + s))
            #expect(!fast(r + bigS))
            #expect(try !openSSLVerifies(pair, digest: digest, raw: r + bigS))
        }
    }

    @Test("digest 0 (u1 = 0) and a digest of n or more (used unreduced, like OpenSSL) agree with EVP_PKEY_verify")
    func unusualDigests() throws {
        let pair = try KeyPair()
        let table = try #require(PrecomputedP256Key(publicKey: pair.pointer))
        func fast(_ digest: [UInt8], _ raw: [UInt8]) -> Bool {
            raw.withUnsafeBytes { sig in digest.withUnsafeBytes { table.verify(signature: sig, digest: $0) } }
        }
        let zero = [UInt8](repeating: 0, count: 32)
        let (_, r0, s0) = try signature(pair, digest: zero)
        #expect(fast(zero, r0 + s0))
        #expect(try openSSLVerifies(pair, digest: zero, raw: r0 + s0))
        // A digest d < 2^256 - n signs like d + n: both checks reduce it the same way.
        let small = [UInt8](repeating: 0, count: 31) + [7]
        let (_, r1, s1) = try signature(pair, digest: small)
        let big = try #require(Self.add(small, Self.order))
        for digest in [small, big] {
            #expect(fast(digest, r1 + s1))
            #expect(try openSSLVerifies(pair, digest: digest, raw: r1 + s1))
        }
        // The digest n itself is 0 mod n.
        #expect(fast(Self.order, r0 + s0))
        #expect(try openSSLVerifies(pair, digest: Self.order, raw: r0 + s0))
    }

    @Test("dropping a PublicKey frees its EVP_PKEY (and its pooled contexts and table)")
    func freesItsKey() throws {
        let before = freedKeyMarkers.load(ordering: .relaxed)
        do {
            let pair = try KeyPair()
            let message = Array("free me".utf8)
            let raw = try pair.sign(message)
            // A key owned by the PublicKey alone, marked so that its destruction is seen.
            EVP_PKEY_up_ref(pair.pointer)
            #expect(EVP_PKEY_set_ex_data(pair.pointer, freedKeyIndex, UnsafeMutableRawPointer(bitPattern: 0x5EA7)) == 1)
            let key = PublicKey(owning: pair.pointer, precomputeAfter: 1)
            for _ in 0..<3 {
                #expect(raw.withUnsafeBytes { sig in message.withUnsafeBytes { key.verifyES256(signature: sig, message: $0) } })
            }
            #expect(key.usesPrecomputedTable)
        }
        // Both references (the pair's and the PublicKey's) are gone: the key was freed once.
        #expect(freedKeyMarkers.load(ordering: .relaxed) == before + 1)
    }

    @Test("a signature by another key is refused")
    func otherKey() throws {
        let signer = try KeyPair(), other = try KeyPair()
        let table = other.publicKey(precomputeAfter: 0)
        let plain = other.publicKey(precomputeAfter: nil)
        for index in 0..<20 {
            let message = Array("message \(index)".utf8)
            #expect(verdicts(try signer.sign(message), message, table: table, plain: plain) == (false, false))
        }
        #expect(table.usesPrecomputedTable)
    }

    @Test("a key switches to its table after precomputeAfter verifications and stays correct")
    func switchesAfterThreshold() throws {
        let pair = try KeyPair()
        let key = pair.publicKey(precomputeAfter: 3)
        let message = Array("payload".utf8)
        let signature = try pair.sign(message)
        var tampered = signature
        tampered[5] ^= 0x40
        for _ in 0..<3 {
            #expect(signature.withUnsafeBytes { sig in message.withUnsafeBytes { key.verifyES256(signature: sig, message: $0) } })
            #expect(!key.usesPrecomputedTable)
        }
        #expect(signature.withUnsafeBytes { sig in message.withUnsafeBytes { key.verifyES256(signature: sig, message: $0) } })
        #expect(key.usesPrecomputedTable)
        #expect(!tampered.withUnsafeBytes { sig in message.withUnsafeBytes { key.verifyES256(signature: sig, message: $0) } })
    }

    @Test("many threads share one table and each gets its own answer")
    func concurrent() throws {
        let pair = try KeyPair()
        let key = pair.publicKey(precomputeAfter: 0)
        let samples: [(signature: [UInt8], message: [UInt8], valid: Bool)] = try (0..<64).map { index in
            let message = Array("message number \(index)".utf8)
            var signature = try pair.sign(message)
            if index % 3 == 0 { signature[40] ^= 0x08 }
            return (signature, message, index % 3 != 0)
        }
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<96 {
                let sample = samples[(worker * 13 + round) % samples.count]
                let verdict = sample.signature.withUnsafeBytes { sig in
                    sample.message.withUnsafeBytes { key.verifyES256(signature: sig, message: $0) }
                }
                if verdict != sample.valid { wrong.withLock { $0 += 1 } }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
        #expect(key.usesPrecomputedTable)
    }
}
