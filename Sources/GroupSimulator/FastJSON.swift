import AppStoreModels
import Foundation
import JWSVerification

/// Byte-level writer producing exactly `JSONValue.canonicalData()` (sorted keys, no whitespace,
/// the same escapes), several times faster: the simulator serializes every payload it signs and
/// every line it emits, and `canonicalData()` appends one Unicode scalar at a time.
enum FastJSON {
    static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(value, into: &out)
        return out
    }

    static func string(_ value: JSONValue) -> String { String(decoding: bytes(value), as: UTF8.self) }

    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): out.append(contentsOf: (d.isFinite ? "\(d)" : "null").utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key]!, into: &out)  // key comes from members.keys
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                out.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(byte)
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
                case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    out.append(contentsOf: Array("\\u00".utf8))
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Internals exposed for tests.
public enum SimulatorInternals {
    /// The simulator's canonical JSON text for `value` (must equal `value.canonicalString()`).
    public static func fastCanonical(_ value: JSONValue) -> String { FastJSON.string(value) }
}

extension SimulatorInternals {
    /// Lowercase hex SHA-256 (the id of an API-response event is this over its canonical line).
    public static func sha256Hex(_ data: Data) -> String { SHA256Digest.hex(data) }
}
