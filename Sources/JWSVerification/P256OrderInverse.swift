/// Inverses modulo P-256's group order `n`, the one step of an ECDSA check OpenSSL's public API
/// only offers through the generic `BN_mod_inverse` (a bit-at-a-time loop over heap numbers,
/// about 10 µs: a third of a table-driven verification).
///
/// This is the binary extended Euclidean algorithm on four 64-bit limbs. It handles
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
    }

    /// P-256's group order `n`.
    static let order = Number(0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000)

    /// `-n⁻¹ mod 2⁶⁴` (Newton's iteration on the lowest limb: each step doubles the correct bits).
    static let negatedInverseOfOrder: UInt64 = {
        let low = order.limbs.0
        var inverse = low  // correct to 3 bits for any odd number
        for _ in 0..<5 { inverse = inverse &* (2 &- low &* inverse) }
        return 0 &- inverse
    }()

    /// Trailing zero bits of a nonzero number.
    @inline(__always)
    private static func trailingZeros(_ x: Number) -> Int {
        if x.limbs.0 != 0 { return x.limbs.0.trailingZeroBitCount }
        if x.limbs.1 != 0 { return 64 + x.limbs.1.trailingZeroBitCount }
        if x.limbs.2 != 0 { return 128 + x.limbs.2.trailingZeroBitCount }
        return 192 + x.limbs.3.trailingZeroBitCount
    }

    /// `x >> shift` for `shift` in `1...63`.
    @inline(__always)
    private static func shiftedRight(_ x: Number, by shift: Int) -> Number {
        let back = 64 - shift
        return Number(x.limbs.0 >> shift | x.limbs.1 << back, x.limbs.1 >> shift | x.limbs.2 << back,
                      x.limbs.2 >> shift | x.limbs.3 << back, x.limbs.3 >> shift)
    }

    /// `x / 2^shift mod n` for `x < n` and `shift` in `1...63`: add the multiple `m·n` (`m < 2^shift`)
    /// that clears the low `shift` bits, shift, and subtract `n` once if the result reached it.
    @inline(__always)
    private static func dividedModOrder(_ x: Number, byPowerOfTwo shift: Int) -> Number {
        let m = (x.limbs.0 &* negatedInverseOfOrder) & ((1 << UInt64(shift)) &- 1)
        // m·n as five limbs.
        let p0 = m.multipliedFullWidth(by: order.limbs.0)
        let p1 = m.multipliedFullWidth(by: order.limbs.1)
        let p2 = m.multipliedFullWidth(by: order.limbs.2)
        let p3 = m.multipliedFullWidth(by: order.limbs.3)
        // x + m·n, limb by limb with carries (each carry is 0 or 1; sums stay below 2 · 2⁶⁴).
        let (s0, c0) = x.limbs.0.addingReportingOverflow(p0.low)
        let (t1, c1a) = x.limbs.1.addingReportingOverflow(p1.low)
        let (t1b, c1b) = t1.addingReportingOverflow(p0.high)
        let (s1, c1c) = t1b.addingReportingOverflow(c0 ? 1 : 0)
        let carry1: UInt64 = (c1a ? 1 : 0) + (c1b ? 1 : 0) + (c1c ? 1 : 0)
        let (t2, c2a) = x.limbs.2.addingReportingOverflow(p2.low)
        let (t2b, c2b) = t2.addingReportingOverflow(p1.high)
        let (s2, c2c) = t2b.addingReportingOverflow(carry1)
        let carry2: UInt64 = (c2a ? 1 : 0) + (c2b ? 1 : 0) + (c2c ? 1 : 0)
        let (t3, c3a) = x.limbs.3.addingReportingOverflow(p3.low)
        let (t3b, c3b) = t3.addingReportingOverflow(p2.high)
        let (s3, c3c) = t3b.addingReportingOverflow(carry2)
        let carry3: UInt64 = (c3a ? 1 : 0) + (c3b ? 1 : 0) + (c3c ? 1 : 0)
        let s4 = p3.high &+ carry3  // m·n < 2⁶³·2²⁵⁶ and x < 2²⁵⁶: no overflow
        let back = 64 - shift
        let result = Number(s0 >> shift | s1 << back, s1 >> shift | s2 << back, s2 >> shift | s3 << back, s3 >> shift | s4 << back)
        // result < n/2^shift + n < 2n: it fits in 256 bits plus the bit s4 >> shift. Subtract n
        // when the result reached it (the subtraction did not borrow, or the extra bit is set).
        let (reduced, borrow) = result.subtracting(order)
        return select(reduced, result, when: !borrow || s4 >> shift != 0)
    }

    /// `a` when `condition` holds, else `b`, without a branch (the condition is data: a branch
    /// on it is mispredicted half the time).
    @inline(__always)
    private static func select(_ a: Number, _ b: Number, when condition: Bool) -> Number {
        let mask = 0 &- UInt64(condition ? 1 : 0)
        return Number(b.limbs.0 ^ ((a.limbs.0 ^ b.limbs.0) & mask), b.limbs.1 ^ ((a.limbs.1 ^ b.limbs.1) & mask),
                      b.limbs.2 ^ ((a.limbs.2 ^ b.limbs.2) & mask), b.limbs.3 ^ ((a.limbs.3 ^ b.limbs.3) & mask))
    }

    /// `a - b mod n` for `a, b < n`.
    @inline(__always)
    private static func subtractModOrder(_ a: Number, _ b: Number) -> Number {
        let (difference, borrow) = a.subtracting(b)
        let mask = 0 &- UInt64(borrow ? 1 : 0)
        return difference.adding(Number(order.limbs.0 & mask, order.limbs.1 & mask, order.limbs.2 & mask, order.limbs.3 & mask)).0
    }

    /// `a⁻¹ mod n`, or `nil` when `a` is 0 or not below `n` (`n` is prime: every other `a` has one).
    ///
    /// Binary extended Euclid: keep `u` and `v` odd, order them so `u ≥ v` (a swap by mask, not a
    /// branch), subtract, and strip all of `u`'s trailing zeros at once, dividing its cofactor by
    /// that power of two in one step. About 180 rounds for a random `a`.
    static func inverse(_ a: Number) -> Number? {
        guard !a.isZero, !a.isAtLeast(order) else { return nil }
        // Invariants: u ≡ a·x1 and v ≡ a·x2 (mod n); gcd(u, v) = gcd(a, n) = 1.
        var u = a, v = order
        var x1 = Number(1, 0, 0, 0), x2 = Number(0, 0, 0, 0)
        while true {
            // u is nonzero: it starts as a, and below it is u - v with u > v.
            var zeros = trailingZeros(u)
            while zeros > 0 {
                let shift = min(zeros, 63)
                u = shiftedRight(u, by: shift)
                x1 = dividedModOrder(x1, byPowerOfTwo: shift)
                zeros -= shift
            }
            // Both odd: equal only when both are 1 (their gcd), and then u ≡ a·x1 gives x1 = a⁻¹.
            if u == v { return x1 }
            // Order the pair so u > v, then u - v is even and nonzero.
            let swap = !u.isAtLeast(v)
            (u, v) = (select(v, u, when: swap), select(u, v, when: swap))
            (x1, x2) = (select(x2, x1, when: swap), select(x1, x2, when: swap))
            u = u.subtracting(v).0
            x1 = subtractModOrder(x1, x2)
        }
    }
}
