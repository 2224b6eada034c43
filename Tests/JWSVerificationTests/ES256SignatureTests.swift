import COpenSSL
import Foundation
import Testing

@testable import JWSVerification

/// The hand-written R‖S → DER conversion matches OpenSSL's own encoding.
@Suite("ES256 signature encoding")
struct ES256SignatureTests {
    /// `i2d_ECDSA_SIG` of the two 32-byte halves (what the verifier used before).
    private func openSSLDER(_ raw: [UInt8]) throws -> [UInt8] {
        let signature = try #require(ECDSA_SIG_new())
        defer { ECDSA_SIG_free(signature) }
        let r = try #require(raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) })
        let s = try #require(raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress.map { $0 + 32 }, 32, nil) })
        #expect(ECDSA_SIG_set0(signature, r, s) == 1)
        let length = i2d_ECDSA_SIG(signature, nil)
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_ECDSA_SIG(signature, &cursor)
        }
        return der
    }

    @Test("random, zero-led, high-bit and all-zero halves encode exactly as i2d_ECDSA_SIG does")
    func matchesOpenSSL() throws {
        var generator = SystemRandomNumberGenerator()
        var samples: [[UInt8]] = (0..<200).map { _ in (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        samples.append([UInt8](repeating: 0, count: 64))
        samples.append([UInt8](repeating: 0xFF, count: 64))
        samples.append([UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [0x80])
        samples.append([0x00, 0x00, 0x7F] + [UInt8](repeating: 0x11, count: 29) + [0x80] + [UInt8](repeating: 0, count: 31))
        for raw in samples {
            let der = try #require(ES256Signature.der(fromRaw: Data(raw)))
            #expect([UInt8](der) == (try openSSLDER(raw)))
            #expect(der.count <= ES256Signature.maximumDERLength)
        }
        #expect(ES256Signature.der(fromRaw: Data(count: 63)) == nil)
    }
}
