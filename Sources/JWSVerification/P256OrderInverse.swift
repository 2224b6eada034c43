/// Inverses modulo P-256's group order `n`, the one step of an ECDSA check OpenSSL's public API
/// only offers through the generic `BN_mod_inverse` (a bit-at-a-time loop over heap numbers,
/// about 10 µs: a third of a table-driven verification).
///
/// This is the binary extended Euclidean algorithm on four 64-bit limbs, about 3 µs. It handles
/// public values only (signatures), so it makes no attempt at constant time. Tests compare it
/// with `BN_mod_inverse` on random and edge-case inputs.
enum P256OrderInverse {
    /// A 256-bit unsigned number, least significant limb first.
    struct Number: Equatable {
        var limbs: (UInt64, UInt64, UInt64, UInt64)

        static func == (a: Number, b: Number) -> Bool {
            a.limbs.0 == b.limbs.0 && a.limbs.1 == b.limbs.1 && a.limbs.2 == b.limbs.2 && a.limbs.3 == b.limbs.3
        }

        /// The number whose 32 big-endian bytes start at `bytes`.
        init(bigEndian bytes: UnsafePointer<UInt8>) {
            func limb(_ index: Int) -> UInt64 {
                var value: UInt64 = 0
                for offset in 0..<8 { value = value << 8 | UInt64(bytes[index * 8 + offset]) }
                return value
            }
            limbs = (limb(3), limb(2), limb(1), limb(0))
        }

        init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) { limbs = (l0, l1, l2, l3) }

        /// Writes the number as 32 big-endian bytes at `out`.
        func write(bigEndian out: UnsafeMutablePointer<UInt8>) {
            func put(_ value: UInt64, at index: Int) {
                for offset in 0..<8 { out[index * 8 + offset] = UInt8(truncatingIfNeeded: value >> (56 - 8 * offset)) }
            }
            put(limbs.3, at: 0)
            put(limbs.2, at: 1)
            put(limbs.1, at: 2)
            put(limbs.0, at: 3)
        }

        var isZero: Bool { limbs.0 | limbs.1 | limbs.2 | limbs.3 == 0 }
        var isOne: Bool { limbs.0 == 1 && limbs.1 | limbs.2 | limbs.3 == 0 }
        var isEven: Bool { limbs.0 & 1 == 0 }

        /// `self >= other`.
        func isAtLeast(_ other: Number) -> Bool {
            if limbs.3 != other.limbs.3 { return limbs.3 > other.limbs.3 }
            if limbs.2 != other.limbs.2 { return limbs.2 > other.limbs.2 }
            if limbs.1 != other.limbs.1 { return limbs.1 > other.limbs.1 }
            return limbs.0 >= other.limbs.0
        }

        /// `self - other` modulo 2²⁵⁶, and whether it borrowed.
        func subtracting(_ other: Number) -> (Number, borrow: Bool) {
            let (d0, b0) = limbs.0.subtractingReportingOverflow(other.limbs.0)
            let (d1a, b1a) = limbs.1.subtractingReportingOverflow(other.limbs.1)
            let (d1, b1b) = d1a.subtractingReportingOverflow(b0 ? 1 : 0)
            let (d2a, b2a) = limbs.2.subtractingReportingOverflow(other.limbs.2)
            let (d2, b2b) = d2a.subtractingReportingOverflow(b1a || b1b ? 1 : 0)
            let (d3a, b3a) = limbs.3.subtractingReportingOverflow(other.limbs.3)
            let (d3, b3b) = d3a.subtractingReportingOverflow(b2a || b2b ? 1 : 0)
            return (Number(d0, d1, d2, d3), b3a || b3b)
        }

        /// `self + other` modulo 2²⁵⁶, and whether it carried.
        func adding(_ other: Number) -> (Number, carry: Bool) {
            let (s0, c0) = limbs.0.addingReportingOverflow(other.limbs.0)
            let (s1a, c1a) = limbs.1.addingReportingOverflow(other.limbs.1)
            let (s1, c1b) = s1a.addingReportingOverflow(c0 ? 1 : 0)
            let (s2a, c2a) = limbs.2.addingReportingOverflow(other.limbs.2)
            let (s2, c2b) = s2a.addingReportingOverflow(c1a || c1b ? 1 : 0)
            let (s3a, c3a) = limbs.3.addingReportingOverflow(other.limbs.3)
            let (s3, c3b) = s3a.addingReportingOverflow(c2a || c2b ? 1 : 0)
            return (Number(s0, s1, s2, s3), c3a || c3b)
        }

        /// `self >> 1`, with `top` shifted into the highest bit.
        func halved(top: Bool = false) -> Number {
            Number(limbs.0 >> 1 | limbs.1 << 63, limbs.1 >> 1 | limbs.2 << 63, limbs.2 >> 1 | limbs.3 << 63,
                   limbs.3 >> 1 | (top ? 1 << 63 : 0))
        }
    }

    /// P-256's group order `n`.
    static let order = Number(0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000)

    /// `x / 2 mod n` for `x < n` (`n` is odd: add `n` first when `x` is odd).
    private static func halveModOrder(_ x: Number) -> Number {
        guard !x.isEven else { return x.halved() }
        let (sum, carry) = x.adding(order)
        return sum.halved(top: carry)
    }

    /// `a - b mod n` for `a, b < n`.
    private static func subtractModOrder(_ a: Number, _ b: Number) -> Number {
        let (difference, borrow) = a.subtracting(b)
        return borrow ? difference.adding(order).0 : difference
    }

    /// `a⁻¹ mod n`, or `nil` when `a` is 0 or not below `n` (`n` is prime: every other `a` has one).
    static func inverse(_ a: Number) -> Number? {
        guard !a.isZero, !a.isAtLeast(order) else { return nil }
        // Invariants: u ≡ a·x1 and v ≡ a·x2 (mod n), with gcd(u, v) = gcd(a, n) = 1.
        var u = a, v = order
        var x1 = Number(1, 0, 0, 0), x2 = Number(0, 0, 0, 0)
        while !u.isOne && !v.isOne {
            while u.isEven {
                u = u.halved()
                x1 = halveModOrder(x1)
            }
            while v.isEven {
                v = v.halved()
                x2 = halveModOrder(x2)
            }
            if u.isAtLeast(v) {
                u = u.subtracting(v).0
                x1 = subtractModOrder(x1, x2)
            } else {
                v = v.subtracting(u).0
                x2 = subtractModOrder(x2, x1)
            }
        }
        return u.isOne ? x1 : x2
    }
}
