import CLibPQ
import Foundation

/// Query parameters laid out for `PQexecParams` / `PQexecPrepared`: one byte buffer plus the
/// per-parameter type, offset, length and format arrays libpq wants.
struct PostgresParameters {
    private var storage: [UInt8] = []
    private var offsets: [Int] = []  // -1 for NULL
    private(set) var lengths: [Int32] = []
    private(set) var formats: [Int32] = []
    private(set) var types: [Oid] = []

    /// The most parameters one statement can carry (the protocol counts them in an Int16).
    static let maximumCount = 65_535

    /// Encodes `values`; `.int64` and `.bytea` use `format`, `.text` is always sent as text.
    init(_ values: [PostgresValue], format: PostgresFormat, sql: String) throws(PostgresError) {
        guard values.count <= Self.maximumCount else {
            throw PostgresError(kind: .usage, message: "\(values.count) parameters; a statement takes at most \(Self.maximumCount)", sql: sql)
        }
        offsets.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        formats.reserveCapacity(values.count)
        types.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            switch value {
            case .null:
                add(offset: -1, length: 0, format: .text, type: PostgresTypeOID.unspecified)
            case .int64(let integer):
                let start = storage.count
                if format == .binary {
                    withUnsafeBytes(of: integer.bigEndian) { storage.append(contentsOf: $0) }
                    add(offset: start, length: 8, format: .binary, type: PostgresTypeOID.int8)
                } else {
                    storage.append(contentsOf: String(integer).utf8)
                    storage.append(0)
                    add(offset: start, length: 0, format: .text, type: PostgresTypeOID.int8)
                }
            case .text(let text):
                let start = storage.count
                storage.append(contentsOf: text.utf8)
                // Text parameters are NUL-terminated C strings; PostgreSQL text cannot hold NUL anyway.
                guard !storage[start...].contains(0) else {
                    throw PostgresError(kind: .usage, sqlState: "22021",
                                        message: "parameter $\(index + 1) contains a NUL character, which PostgreSQL text cannot store", sql: sql)
                }
                storage.append(0)
                add(offset: start, length: 0, format: .text, type: PostgresTypeOID.unspecified)
            case .bytea(let data):
                let start = storage.count
                if format == .binary {
                    storage.append(contentsOf: data)
                    add(offset: start, length: Int32(data.count), format: .binary, type: PostgresTypeOID.bytea)
                } else {
                    Self.appendByteaText(data, to: &storage)
                    storage.append(0)
                    add(offset: start, length: 0, format: .text, type: PostgresTypeOID.bytea)
                }
            }
        }
        // Never empty, so a zero-length binary value (empty bytea) still gets a non-NULL pointer.
        storage.append(0)
    }

    private mutating func add(offset: Int, length: Int32, format: PostgresFormat, type: Oid) {
        offsets.append(offset)
        lengths.append(length)
        formats.append(format.rawValue)
        types.append(type)
    }

    /// bytea's hex text form: `\x` then two lowercase hex digits per byte.
    static func appendByteaText(_ data: Data, to buffer: inout [UInt8]) {
        buffer.reserveCapacity(buffer.count + 2 + data.count * 2)
        buffer.append(UInt8(ascii: "\\"))
        buffer.append(UInt8(ascii: "x"))
        for byte in data {
            buffer.append(HexDigits.lowercase[Int(byte >> 4)])
            buffer.append(HexDigits.lowercase[Int(byte & 0x0F)])
        }
    }

    /// The number of parameters.
    var count: Int { offsets.count }

    /// Calls `body` with the arrays `PQexecParams` takes (types, values, lengths, formats).
    func withUnsafeArguments<R>(
        _ body: (UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        storage.withUnsafeBufferPointer { bytes in
            let base = bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                guard offset >= 0, let base else { return nil }
                return base + offset
            }
            return types.withUnsafeBufferPointer { types in
                values.withUnsafeBufferPointer { values in
                    lengths.withUnsafeBufferPointer { lengths in
                        formats.withUnsafeBufferPointer { formats in
                            body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}
