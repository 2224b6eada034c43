import COpenSSL
import Synchronization

/// ES256 verification with one P-256 public key `Q` whose multiples are precomputed.
///
/// An ECDSA check computes `u1·G + u2·Q`. OpenSSL has a table of multiples of the generator `G`
/// built in, but multiplies `Q` from scratch each time: about 60% of a verification. App Store
/// payloads are all signed by one leaf key for months, so this type builds the same kind of table
/// for `Q` once (OpenSSL's `EC_GROUP_precompute_mult` on a copy of the curve whose generator is
/// `Q`, about 30 ms and 150 KB) and then verifies with two table-driven multiplications, about
/// twice as fast as `EVP_PKEY_verify`.
///
/// The arithmetic is SEC 1 §4.1.4 on OpenSSL's own primitives: `r` and `s` in `[1, n-1]`,
/// `w = s⁻¹ mod n` (``P256OrderInverse``), `u1 = e·w`, `u2 = r·w`, `R = u1·G + u2·Q` not at infinity, and
/// `R.x mod n == r`. Only public values are involved (no secret, so no constant-time concern).
/// Tests check it against `EVP_PKEY_verify` on valid, tampered and out-of-range signatures.
final class PrecomputedP256Key: @unchecked Sendable {
    // @unchecked Sendable: `curve` and `keyGroup` are built in init and never mutated
    // afterwards; OpenSSL's EC_POINT_mul/EC_POINT_add take groups as `const` and keep all per-call
    // state in the caller's BN_CTX and points. Each verification takes a `Scratch` (its BN_CTX,
    // numbers and points) out of `idle` under the lock and uses it alone.
    /// P-256 with its standard generator (and OpenSSL's built-in table).
    private let curve: OpaquePointer
    /// P-256 whose generator is the key point, with precomputed multiples.
    private let keyGroup: OpaquePointer
    /// Scratch objects not in use (at most ``maximumIdleScratch``).
    private let idle = Mutex<[Scratch]>([])
    private static let maximumIdleScratch = 16

    /// Builds the table for the P-256 key in `publicKey` (an `EVP_PKEY*` the caller keeps owning).
    /// `nil` when the key is not a P-256 point or OpenSSL cannot build the table.
    init?(publicKey: OpaquePointer) {
        var encoded = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(publicKey, "pub", &encoded, encoded.count, &length) == 1, length == 65,
              let curve = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            _ = drainOpenSSLErrors()
            return nil
        }
        guard let keyGroup = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            _ = drainOpenSSLErrors()
            EC_GROUP_free(curve)
            return nil
        }
        let context = BN_CTX_new()
        let point = EC_POINT_new(curve)
        defer {
            BN_CTX_free(context)
            EC_POINT_free(point)
        }
        guard let point, let context,
              EC_POINT_oct2point(curve, point, encoded, length, context) == 1,
              EC_POINT_is_on_curve(curve, point, context) == 1,
              EC_POINT_is_at_infinity(curve, point) == 0,
              let order = EC_GROUP_get0_order(curve),
              EC_GROUP_set_generator(keyGroup, point, order, BN_value_one()) == 1,
              seatledger_EC_GROUP_precompute_mult(keyGroup, context) == 1,
              seatledger_EC_GROUP_have_precompute_mult(keyGroup) == 1 else {
            _ = drainOpenSSLErrors()
            EC_GROUP_free(curve)
            EC_GROUP_free(keyGroup)
            return nil
        }
        self.curve = curve
        self.keyGroup = keyGroup
    }

    deinit {
        idle.withLock { $0.removeAll() }
        EC_GROUP_free(keyGroup)
        EC_GROUP_free(curve)
    }

    /// Whether the 64-byte raw signature `R‖S` is a valid ECDSA signature of the 32-byte `digest`.
    func verify(signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == 64, digest.count == 32,
              let signatureBytes = signature.bindMemory(to: UInt8.self).baseAddress,
              let digestBytes = digest.bindMemory(to: UInt8.self).baseAddress,
              let scratch = idle.withLock({ $0.popLast() }) ?? Scratch(curve: curve) else { return false }
        let valid = check(signatureBytes, digestBytes, scratch)
        if !valid { _ = drainOpenSSLErrors() }
        idle.withLock { if $0.count < Self.maximumIdleScratch { $0.append(scratch) } }
        return valid
    }

    private func check(_ signature: UnsafePointer<UInt8>, _ digest: UnsafePointer<UInt8>, _ scratch: Scratch) -> Bool {
        let context = scratch.context
        guard let order = EC_GROUP_get0_order(curve),
              BN_bin2bn(signature, 32, scratch.r) != nil, BN_bin2bn(signature + 32, 32, scratch.s) != nil,
              BN_bin2bn(digest, 32, scratch.e) != nil else { return false }
        // r and s must lie in [1, n-1].
        guard BN_is_zero(scratch.r) == 0, BN_is_zero(scratch.s) == 0,
              BN_cmp(scratch.r, order) < 0, BN_cmp(scratch.s, order) < 0 else { return false }
        // w = s⁻¹ mod n (P256OrderInverse: a third of the time of BN_mod_inverse).
        guard let inverse = P256OrderInverse.inverse(P256OrderInverse.Number(bigEndian: signature + 32)) else { return false }
        var inverseBytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let converted = withUnsafeMutableBytes(of: &inverseBytes) { raw -> Bool in
            guard let bytes = raw.bindMemory(to: UInt8.self).baseAddress else { return false }
            inverse.write(bigEndian: bytes)
            return BN_bin2bn(bytes, 32, scratch.w) != nil
        }
        guard converted,
              BN_mod_mul(scratch.u1, scratch.e, scratch.w, order, context) == 1,
              BN_mod_mul(scratch.u2, scratch.r, scratch.w, order, context) == 1,
              EC_POINT_mul(curve, scratch.sum, scratch.u1, nil, nil, context) == 1,
              EC_POINT_mul(keyGroup, scratch.keyMultiple, scratch.u2, nil, nil, context) == 1,
              EC_POINT_add(curve, scratch.sum, scratch.sum, scratch.keyMultiple, context) == 1,
              EC_POINT_is_at_infinity(curve, scratch.sum) == 0,
              EC_POINT_get_affine_coordinates(curve, scratch.sum, scratch.x, nil, context) == 1,
              BN_nnmod(scratch.x, scratch.x, order, context) == 1 else { return false }
        return BN_cmp(scratch.x, scratch.r) == 0
    }

    /// The numbers, points and `BN_CTX` one verification works in.
    private final class Scratch: @unchecked Sendable {
        // @unchecked Sendable: a scratch object is used by one verification at a time (it is taken
        // out of the pool under its lock and put back when the verification is done).
        let context: OpaquePointer
        let r: OpaquePointer, s: OpaquePointer, e: OpaquePointer, w: OpaquePointer
        let u1: OpaquePointer, u2: OpaquePointer, x: OpaquePointer
        let sum: OpaquePointer, keyMultiple: OpaquePointer

        init?(curve: OpaquePointer) {
            let context = BN_CTX_new()
            let (r, s, e, w, u1, u2, x) = (BN_new(), BN_new(), BN_new(), BN_new(), BN_new(), BN_new(), BN_new())
            let (sum, keyMultiple) = (EC_POINT_new(curve), EC_POINT_new(curve))
            guard let context, let r, let s, let e, let w, let u1, let u2, let x, let sum, let keyMultiple else {
                // BN_free, EC_POINT_free and BN_CTX_free accept NULL.
                for number in [r, s, e, w, u1, u2, x] { BN_free(number) }
                EC_POINT_free(sum)
                EC_POINT_free(keyMultiple)
                BN_CTX_free(context)
                return nil
            }
            self.context = context
            (self.r, self.s, self.e, self.w, self.u1, self.u2, self.x) = (r, s, e, w, u1, u2, x)
            (self.sum, self.keyMultiple) = (sum, keyMultiple)
        }

        deinit {
            for number in [r, s, e, w, u1, u2, x] { BN_free(number) }
            EC_POINT_free(sum)
            EC_POINT_free(keyMultiple)
            BN_CTX_free(context)
        }
    }
}
