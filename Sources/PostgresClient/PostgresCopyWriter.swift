import CLibPQ
import Foundation

/// Encodes rows for `COPY … FROM STDIN` and sends them with `PQputCopyData` in large chunks.
///
/// Handed to the body of ``PostgresConnection/copyIn(table:columns:format:_:)``; not usable after
/// it returns. Binary format needs exact column types (`.int64` only into `bigint`, `.text`
/// into text-like columns, `.bytea` into `bytea`); text format lets the server parse every field.
public final class PostgresCopyWriter {
    private unowned let connection: PostgresConnection
    /// The wire format rows are encoded in.
    public let format: PostgresFormat
    /// The number of fields every row must have.
    public let columnCount: Int
    /// Rows written so far.
    public private(set) var rowCount: Int64 = 0
    private let sql: String
    private var buffer: [UInt8] = []
    private var isFinished = false

    /// Bytes gathered before one `PQputCopyData` call.
    static let flushThreshold = 1 << 18

    init(connection: PostgresConnection, format: PostgresFormat, columnCount: Int, sql: String) {
        self.connection = connection
        self.format = format
        self.columnCount = columnCount
        self.sql = sql
        buffer.reserveCapacity(Self.flushThreshold + 4096)
        if format == .binary {
            buffer.append(contentsOf: Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00])  // signature
            appendBigEndian(Int32(0))  // flags: no OIDs
            appendBigEndian(Int32(0))  // header extension length
        }
    }

    /// Appends one row; `values.count` must equal the COPY's column count.
    public func writeRow(_ values: [PostgresValue]) throws(PostgresError) {
        guard !isFinished else {
            throw PostgresError(kind: .usage, message: "writeRow after the COPY finished", sql: sql)
        }
        guard values.count == columnCount else {
            throw PostgresError(kind: .usage, message: "row \(rowCount + 1) has \(values.count) fields; the COPY has \(columnCount) columns", sql: sql)
        }
        switch format {
        case .binary: try encodeBinary(values)
        case .text: try encodeText(values)
        }
        rowCount += 1
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Appends one row given as separate arguments.
    public func writeRow(_ values: PostgresValue...) throws(PostgresError) { try writeRow(values) }

    /// Writes the trailer and sends what is buffered; called by `copyIn` after the body.
    func finish() throws(PostgresError) {
        guard !isFinished else { return }
        if format == .binary { appendBigEndian(Int16(-1)) }
        try flush()
        isFinished = true
    }

    /// Marks the writer unusable (the COPY was abandoned).
    func abandon() { isFinished = true }

    private func flush() throws(PostgresError) {
        guard !buffer.isEmpty else { return }
        let status = buffer.withUnsafeBufferPointer { bytes in
            bytes.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { PQputCopyData(connection.handle, $0, Int32(bytes.count)) }
            } ?? 1
        }
        guard status == 1 else { throw PostgresError(connection: connection.handle, sql: sql) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func encodeBinary(_ values: [PostgresValue]) throws(PostgresError) {
        appendBigEndian(Int16(truncatingIfNeeded: values.count))
        for value in values {
            switch value {
            case .null:
                appendBigEndian(Int32(-1))
            case .int64(let integer):
                appendBigEndian(Int32(8))
                appendBigEndian(integer)
            case .text(let text):
                let start = buffer.count
                appendBigEndian(Int32(0))  // patched below with the UTF-8 length
                buffer.append(contentsOf: text.utf8)
                try patchLength(at: start)
            case .bytea(let data):
                guard data.count <= Int32.max else {
                    throw PostgresError(kind: .usage, message: "a bytea field of \(data.count) bytes exceeds COPY's 2 GiB field limit", sql: sql)
                }
                appendBigEndian(Int32(data.count))
                buffer.append(contentsOf: data)
            }
        }
    }

    private func patchLength(at start: Int) throws(PostgresError) {
        let length = buffer.count - start - 4
        guard length <= Int32.max else {
            throw PostgresError(kind: .usage, message: "a field of \(length) bytes exceeds COPY's 2 GiB field limit", sql: sql)
        }
        withUnsafeBytes(of: Int32(length).bigEndian) { bytes in
            for (offset, byte) in bytes.enumerated() { buffer[start + offset] = byte }
        }
    }

    private func encodeText(_ values: [PostgresValue]) throws(PostgresError) {
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            switch value {
            case .null:
                buffer.append(UInt8(ascii: "\\"))
                buffer.append(UInt8(ascii: "N"))
            case .int64(let integer):
                buffer.append(contentsOf: String(integer).utf8)
            case .text(let text):
                for byte in text.utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                    case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                    case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                    case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                    case 0:
                        throw PostgresError(kind: .usage, sqlState: "22021", message: "a text field contains a NUL character, which PostgreSQL text cannot store", sql: sql)
                    default: buffer.append(byte)
                    }
                }
            case .bytea(let data):
                // bytea's own text form is "\x…"; COPY text escapes its backslash.
                buffer.append(UInt8(ascii: "\\"))
                PostgresParameters.appendByteaText(data, to: &buffer)
            }
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    private func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }
}
