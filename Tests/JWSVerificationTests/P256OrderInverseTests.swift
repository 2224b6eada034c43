import COpenSSL
import Testing

@testable import JWSVerification

/// ``P256OrderInverse`` agrees with OpenSSL's `BN_mod_inverse` modulo P-256's order.
@Suite("P-256 order inverse")
struct P256OrderInverseTests {
    /// `BN_mod_inverse(a, n)` as 32 big-endian bytes, or `nil` when OpenSSL finds none.
    private func openSSLInverse(_ bytes: [UInt8]) throws -> [UInt8]? {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        defer { EC_GROUP_free(group) }
        let context = try #require(BN_CTX_new())
        defer { BN_CTX_free(context) }
        let a = try #require(BN_bin2bn(bytes, 32, nil))
        defer { BN_free(a) }
        guard BN_is_zero(a) == 0, BN_cmp(a, EC_GROUP_get0_order(group)) < 0,
              let inverse = BN_mod_inverse(nil, a, EC_GROUP_get0_order(group), context) else { return nil }
        defer { BN_free(inverse) }
        var out = [UInt8](repeating: 0, count: 32)
        _ = out.withUnsafeMutableBufferPointer { BN_bn2binpad(inverse, $0.baseAddress, 32) }
        return out
    }

    private func inverse(_ bytes: [UInt8]) -> [UInt8]? {
        guard let result = bytes.withUnsafeBufferPointer({ buffer in
            buffer.baseAddress.flatMap { P256OrderInverse.inverse(P256OrderInverse.Number(bigEndian: $0)) }
        }) else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { result.write(bigEndian: $0) } }
        return out
    }

    static let order = PrecomputedP256KeyTests.order

    @Test("random values below n have the inverse OpenSSL computes")
    func random() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Also small and sparse values: clear a random number of leading bytes.
            let cleared = Int.random(in: 0..<32, using: &generator)
            if Bool.random(using: &generator) { for index in 0..<cleared { bytes[index] = 0 } }
            let expected = try openSSLInverse(bytes)
            #expect(inverse(bytes) == expected, "a = \(bytes)")
        }
    }

    @Test("edge cases: 1, 2, n-1, n-2, powers of two; 0, n and above have none")
    func edges() throws {
        let one = [UInt8](repeating: 0, count: 31) + [1]
        let two = [UInt8](repeating: 0, count: 31) + [2]
        var cases = [one, two, PrecomputedP256KeyTests.subtract(Self.order, one), PrecomputedP256KeyTests.subtract(Self.order, two)]
        for bit in stride(from: 0, to: 256, by: 17) {
            var power = [UInt8](repeating: 0, count: 32)
            power[31 - bit / 8] = 1 << (bit % 8)
            cases.append(power)
        }
        for value in cases {
            let expected = try #require(try openSSLInverse(value))
            #expect(inverse(value) == expected, "a = \(value)")
        }
        #expect(inverse(one) == one)
        for invalid in [[UInt8](repeating: 0, count: 32), Self.order, [UInt8](repeating: 0xFF, count: 32),
                        try #require(PrecomputedP256KeyTests.add(Self.order, one))] {
            #expect(inverse(invalid) == nil)
        }
    }

    @Test("carries and borrows ripple through every limb")
    func ripple() {
        typealias Number = P256OrderInverse.Number
        // (2^256 - n) + n = 2^256: zero with a carry out, through all four limbs.
        let (sum, carry) = Number(0x0C46_353D_039C_DAAF, 0x4319_0552_58E8_617B, 0, 0xFFFF_FFFF).adding(P256OrderInverse.order)
        #expect(sum.isZero && carry)
        let (difference, borrow) = Number(0, 0, 0, 0).subtracting(Number(1, 0, 0, 0))
        #expect(difference == Number(.max, .max, .max, .max) && borrow)
        let (middle, middleBorrow) = Number(0, 0, 1, 0).subtracting(Number(1, 0, 0, 0))
        #expect(middle == Number(.max, .max, 0, 0) && !middleBorrow)
    }
}
