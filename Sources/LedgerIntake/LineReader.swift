import Foundation
import JWSVerification
import LedgerConcurrency
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads NDJSON lines from a file descriptor without loading the whole input.
///
/// A line longer than `maxLineLength` is never held whole: once the unfinished line passes the
/// limit the reader keeps its first ``keptPrefixBytes`` bytes, feeds the rest through SHA-256 and
/// drops it, so a 1 GB line costs about one read chunk of memory. ``nextLine()`` then returns the
/// kept prefix and ``lastLineOversize`` says how long the whole line was and its SHA-256 (the ingest
/// quarantines it as `line_too_long`; nothing is silently lost, the next lines are read as usual).
/// A final line without a newline is returned too (a truncated file loses nothing).
///
/// Reading and splitting run on a thread of their own, a bounded amount ahead of the consumer
/// (``readAheadBytes``), so the thread calling ``nextLine()`` (the ingest's single writer) only
/// takes finished lines. The thread starts at the first ``nextLine()``.
public final class LineReader {
    private let source: LineSource
    /// The current block of split lines and the next one to hand out.
    private var lines: [ReadLine] = []
    private var nextIndex = 0
    private var finished = false
    /// The current 1-based line number.
    public private(set) var lineNumber = 0
    /// Lines longer than this are flagged.
    public let maxLineLength: Int
    /// What the last line returned by ``nextLine()`` was, when it was longer than the limit by
    /// more than the reader holds (``nil`` for a line returned whole).
    public private(set) var lastLineOversize: OversizedLine?
    /// About how many bytes of split lines the reading thread keeps ready.
    public static let readAheadBytes = 8 << 20
    /// How much of an over-long line is kept (and quarantined): its first 64 KiB.
    public static let keptPrefixBytes = 64 << 10

    /// Reads from an open handle.
    public init(handle: FileHandle, maxLineLength: Int = 1 << 20, chunkSize: Int = 1 << 20) {
        // Lines up to this length are returned whole; longer ones are streamed through SHA-256.
        // One byte over the limit is still whole: a CRLF line's '\r' does not count toward it.
        let wholeUpTo = maxLineLength >= Int.max / 2 ? Int.max : max(maxLineLength + 1, Self.keptPrefixBytes)
        self.source = LineSource(handle: handle, chunkSize: max(1, chunkSize), budget: Self.readAheadBytes, wholeUpTo: wholeUpTo)
        self.maxLineLength = maxLineLength
    }

    deinit { source.cancel() }

    /// Ends the input early, from any thread (a signal handler): the lines already read are still
    /// returned, then ``nextLine()`` returns `nil` (at once, though the reading thread may be
    /// waiting on a pipe that stays open) and ``wasInterrupted`` is `true`.
    public var interrupter: @Sendable () -> Void {
        let source = self.source
        return { source.interrupt() }
    }

    /// Whether the `nil` that ended the lines came from the ``interrupter`` rather than the end of input.
    public var wasInterrupted: Bool { source.isInterrupted }

    /// The largest the reading thread's buffer has been, in bytes (bounded by about
    /// `maxLineLength` plus one chunk whatever the input: tests check it).
    public var peakBufferBytes: Int { source.peakBufferBytes }

    /// The next line (without its `\n`), or `nil` at end of input. For a line over the limit,
    /// its first ``keptPrefixBytes`` bytes (see ``lastLineOversize``).
    public func nextLine() throws -> Data? {
        while nextIndex == lines.count {
            if finished { return nil }
            lines.removeAll(keepingCapacity: true)
            nextIndex = 0
            switch try source.take() {
            case .lines(let block): lines = block
            case .end: finished = true
            }
        }
        defer { nextIndex += 1 }
        lineNumber += 1
        lastLineOversize = lines[nextIndex].oversize
        return lines[nextIndex].data
    }
}

/// A line too long to hold: its full length and digest (its first bytes are what ``LineReader/nextLine()`` returned).
public struct OversizedLine: Sendable, Equatable {
    /// The whole line's length in bytes, without its newline.
    public let length: Int
    /// Lowercase hex SHA-256 of the whole line (without its newline).
    public let sha256: String
}

/// One split line: its bytes (or an over-long line's kept prefix) and, for that, what it was.
struct ReadLine: Sendable {
    var data: Data
    var oversize: OversizedLine?
}

/// The reading thread of a ``LineReader`` and the bounded queue of line blocks it fills.
///
/// The queue is the kit's ``LedgerConcurrency/BoundedChannel``, weighted in bytes: the thread
/// waits while about ``LineReader/readAheadBytes`` of lines are ready, a read error closes the
/// channel with that error (the consumer gets it after the lines read before it), and the
/// consumer going away cancels it, which ends the thread at its next block. `Sendable` without
/// `@unchecked`: every stored property is immutable or thread-safe, and `handle` is read only by
/// the reading thread once it has started.
private final class LineSource: Sendable {
    enum Item { case lines([ReadLine]), end }

    /// One published block: its lines and their bytes. Its weight in the channel counts each
    /// line's newline too, so a block of empty lines still counts against the budget.
    private struct Block: Sendable {
        let lines: [ReadLine]
        let bytes: Int
        var weight: Int { bytes + lines.count }
    }

    private let handle: FileHandle
    private let chunkSize: Int
    private let wholeUpTo: Int
    private let blocks: BoundedChannel<Block>
    private let started = Atomic<Bool>(false)
    private let peak = Atomic<Int>(0)

    init(handle: FileHandle, chunkSize: Int, budget: Int, wholeUpTo: Int) {
        self.handle = handle
        self.chunkSize = chunkSize
        self.wholeUpTo = wholeUpTo
        self.blocks = BoundedChannel(capacity: budget, weight: { $0.weight })
    }

    var peakBufferBytes: Int { peak.load(ordering: .relaxed) }

    /// The next block of lines (waiting for the reading thread), `.end` at end of input, or the read error.
    func take() throws -> Item {
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            let thread = Thread.named("sl-lines") { [self] in produce() }
            thread.start()
        }
        guard let block = try blocks.receive() else { return .end }
        return .lines(block.lines)
    }

    /// Stops the reading thread after its current read (the consumer is gone).
    func cancel() { blocks.cancel() }

    private let interrupted = Atomic<Bool>(false)

    /// Ends the input here: what is queued is still taken, then `.end`; the reading thread stops
    /// at its next block (the read it may be blocked in ends with the process).
    func interrupt() {
        interrupted.store(true, ordering: .releasing)
        blocks.close()
    }

    /// Whether ``interrupt()`` was called.
    var isInterrupted: Bool { interrupted.load(ordering: .acquiring) }

    /// Hands a block to the consumer, waiting while the queue is over budget; `false` once cancelled.
    private func publish(_ lines: [ReadLine], bytes: Int) -> Bool {
        blocks.send(Block(lines: lines, bytes: bytes))
    }

    /// End of input (`nil`) or the read error: the consumer gets it after the blocks before it.
    private func finish(_ error: Error?) { blocks.close(throwing: error) }

    /// An over-long line being streamed: its kept prefix, its length so far and its running digest.
    private struct Oversize {
        var prefix: Data
        var length: Int
        let hasher = SHA256Hasher()
        var line: ReadLine { ReadLine(data: prefix, oversize: OversizedLine(length: length, sha256: hasher.finalizeHex())) }
    }

    /// The reading thread: reads chunks with `read(2)` into one buffer, splits the complete lines
    /// out of it and publishes them, one block per read. An unfinished line longer than
    /// `wholeUpTo` is streamed (prefix kept, rest hashed and dropped) until its newline.
    private func produce() {
        let fd = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var filled = 0       // bytes of `buffer` holding input
        var start = 0        // first byte of the unfinished line (in oversize mode: of its unhashed rest)
        var searched = 0     // bytes of the unfinished line (from `start`) already searched for a newline
        var oversize: Oversize?
        var block: [ReadLine] = []
        var blockBytes = 0
        while true {
            if filled == buffer.count {
                if start > 0 {
                    // Move the unfinished line to the front.
                    buffer.withUnsafeMutableBytes { raw in
                        guard let base = raw.baseAddress else { return }
                        memmove(base, base + start, filled - start)
                    }
                    filled -= start
                    start = 0
                } else {
                    // One line longer than the buffer (but not yet over `wholeUpTo`): grow it.
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                    peak.store(buffer.count, ordering: .relaxed)
                }
            }
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                while true {
                    let n = read(fd, base + filled, raw.count - filled)
                    if n < 0 && errno == EINTR { continue }
                    return n
                }
            }
            if count < 0 {
                let code = errno
                if !block.isEmpty, !publish(block, bytes: blockBytes) { return }
                finish(POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
                return
            }
            if count == 0 {
                if let current = oversize {
                    block.append(current.line)
                    blockBytes += current.prefix.count
                } else if start < filled {
                    block.append(ReadLine(data: buffer.withUnsafeBytes { Data($0[start..<filled]) }))
                    blockBytes += filled - start
                }
                if !block.isEmpty, !publish(block, bytes: blockBytes) { return }
                finish(nil)
                return
            }
            filled += count
            buffer.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var from = start + searched
                if var current = oversize {
                    // Hash up to the newline (or all that was read) and drop it.
                    let hit = memchr(base + from, 0x0A, filled - from)
                    let end = hit.map { base.distance(to: UnsafeRawPointer($0)) } ?? filled
                    current.hasher.update(UnsafeRawBufferPointer(start: base + start, count: end - start))
                    current.length += end - start
                    if hit != nil {
                        block.append(current.line)
                        blockBytes += current.prefix.count
                        oversize = nil
                        start = end + 1
                    } else {
                        oversize = current
                        start = filled
                    }
                    from = start
                }
                if oversize == nil {
                    while from < filled, let hit = memchr(base + from, 0x0A, filled - from) {
                        let newline = base.distance(to: UnsafeRawPointer(hit))
                        block.append(ReadLine(data: Data(bytes: base + start, count: newline - start)))
                        blockBytes += newline - start
                        start = newline + 1
                        from = start
                    }
                    if filled - start > wholeUpTo {
                        // Too long to hold: keep the first bytes, hash everything so far, drop it.
                        let current = Oversize(prefix: Data(bytes: base + start, count: LineReader.keptPrefixBytes), length: filled - start)
                        current.hasher.update(UnsafeRawBufferPointer(start: base + start, count: filled - start))
                        oversize = current
                        start = filled
                    }
                }
                searched = filled - start
            }
            // Publish after every read, so lines arriving slowly (stdin) are not held back.
            if !block.isEmpty {
                guard publish(block, bytes: blockBytes) else { return }
                block = []
                blockBytes = 0
            }
        }
    }
}
