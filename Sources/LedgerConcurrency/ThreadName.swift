#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The name the system shows for a thread SeatLedger starts (`top -H`, `ps -L`, `perf`,
/// `/proc/PID/task/TID/comm`), so that on-call engineers can tell the writer from a reader.
///
/// Foundation's `Thread.name` on Linux is kept inside Foundation and never reaches the kernel:
/// every thread of the process showed as `seatledger`. The kernel keeps a name of at most
/// ``maximumBytes`` bytes per thread, which a thread sets by writing `/proc/thread-self/comm`
/// (proc(5)); `pthread_setname_np` is not visible to Swift without `_GNU_SOURCE`, and `prctl` is
/// variadic. Names are short on purpose: `sl-pool-writer`, `sl-decode-0`, `http-handler-1`.
public enum ThreadName {
    /// The most bytes of a name the kernel keeps (its `TASK_COMM_LEN` less the terminating NUL).
    public static let maximumBytes = 15

    /// Names the calling thread; a longer name keeps its first ``maximumBytes`` bytes (cut at a
    /// character boundary). Returns whether the system took it (`false` where there is no procfs:
    /// the name is a diagnostic, never a reason to fail).
    @discardableResult
    public static func setCurrent(_ name: String) -> Bool {
        var bytes = Array(name.utf8.prefix(maximumBytes))
        while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        return written == bytes.count
    }

    /// The calling thread's name as the system shows it, or `nil` without procfs.
    public static func current() -> String? {
        let descriptor = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        var text = buffer.prefix(count)
        if text.last == UInt8(ascii: "\n") { text.removeLast() }
        return String(decoding: text, as: UTF8.self)
    }
}

#if canImport(Foundation)
import Foundation

extension Thread {
    /// An unstarted thread that runs `body` under `name`, both Foundation's name and the one the
    /// system shows (``ThreadName/setCurrent(_:)``, its first 15 bytes).
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            ThreadName.setCurrent(name)
            body()
        }
        thread.name = name
        return thread
    }
}
#endif
