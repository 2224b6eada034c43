import Foundation

/// Reads NDJSON lines from a file descriptor without loading the whole input.
///
/// Lines longer than `maxLineLength` are still returned whole (so nothing is lost) but flagged,
/// and the ingest quarantines them as `line_too_long`. A final line without a newline is
/// returned too (a truncated file loses nothing).
public final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var atEOF = false
    private let chunkSize: Int
    /// The current 1-based line number.
    public private(set) var lineNumber = 0
    /// Lines longer than this are flagged.
    public let maxLineLength: Int

    /// Reads from an open handle.
    public init(handle: FileHandle, maxLineLength: Int = 1 << 20, chunkSize: Int = 1 << 16) {
        self.handle = handle
        self.maxLineLength = maxLineLength
        self.chunkSize = chunkSize
    }

    /// The next line (without its `\n`, `\r\n` kept minus the `\n`), or `nil` at end of input.
    public func nextLine() throws -> Data? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                lineNumber += 1
                return Data(line)
            }
            if atEOF {
                guard !buffer.isEmpty else { return nil }
                let line = buffer
                buffer = Data()
                lineNumber += 1
                return line
            }
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            if chunk.isEmpty { atEOF = true } else { buffer.append(chunk) }
        }
    }
}
