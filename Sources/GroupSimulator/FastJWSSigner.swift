import AppStoreModels
import Foundation
import JWSSigning

/// Builds the same compact JWS as ``JWSSigner/sign(payload:)`` (identical header bytes, payload
/// bytes = canonical JSON) but with a byte-level base64url encoder, which is several times faster
/// than the Foundation string replacements `JWSSigner` uses. The signature itself still comes from
/// `JWSSigning`'s ``ES256Signer``.
struct FastJWSSigner: Sendable {
    let signer: ES256Signer
    /// base64url(header) + "." as bytes.
    private let headerPrefix: [UInt8]

    init(_ jws: JWSSigner) {
        signer = jws.signer
        let header = JSONValue.object([
            "alg": .string("ES256"),
            "x5c": .array(jws.certificateChain.map { .string($0.base64EncodedString()) }),
        ])
        var prefix: [UInt8] = []
        FastBase64URL.append([UInt8](header.canonicalData()), to: &prefix)
        prefix.append(UInt8(ascii: "."))
        headerPrefix = prefix
    }

    /// Signs the canonical JSON of `payload`.
    func sign(_ payload: JSONValue) throws -> String {
        try sign(payloadBytes: FastJSON.bytes(payload))
    }

    /// Signs `payloadBytes` exactly.
    func sign(payloadBytes: [UInt8]) throws -> String {
        var out = headerPrefix
        out.reserveCapacity(headerPrefix.count + payloadBytes.count * 4 / 3 + 100)
        FastBase64URL.append(payloadBytes, to: &out)
        let signature = try signer.sign(Data(out))
        out.append(UInt8(ascii: "."))
        FastBase64URL.append([UInt8](signature), to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Unpadded base64url over byte arrays.
enum FastBase64URL {
    private static let table: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
        let n = bytes.count
        let length = n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1)
        let encoded = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            table.withUnsafeBufferPointer { t in
                bytes.withUnsafeBufferPointer { input in
                    var i = 0, o = 0
                    while i + 3 <= n {
                        let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        buffer[o] = t[Int(v >> 18 & 63)]
                        buffer[o + 1] = t[Int(v >> 12 & 63)]
                        buffer[o + 2] = t[Int(v >> 6 & 63)]
                        buffer[o + 3] = t[Int(v & 63)]
                        i += 3
                        o += 4
                    }
                    if n - i == 1 {
                        let v = UInt32(input[i]) << 16
                        buffer[o] = t[Int(v >> 18 & 63)]
                        buffer[o + 1] = t[Int(v >> 12 & 63)]
                    } else if n - i == 2 {
                        let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                        buffer[o] = t[Int(v >> 18 & 63)]
                        buffer[o + 1] = t[Int(v >> 12 & 63)]
                        buffer[o + 2] = t[Int(v >> 6 & 63)]
                    }
                }
            }
            initialized = length
        }
        out.append(contentsOf: encoded)
    }
}
