import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Checks on files named on the command line, and short, human reasons for file errors (instead
/// of Foundation's `NSError` dumps).
enum FileChecks {
    /// Throws a usage error unless `path` exists and is readable: "cannot read PATH: no such file",
    /// "…: is a directory" (unless `allowDirectory`, e.g. an ingest spool directory) or
    /// "…: permission denied". Never opens the file (a FIFO would block).
    static func requireReadable(_ path: String, allowDirectory: Bool = false) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw InputError(message: "cannot read \(path): no such file")
        }
        if isDirectory.boolValue {
            guard allowDirectory else { throw InputError(message: "cannot read \(path): is a directory") }
            guard access(path, R_OK | X_OK) == 0 else { throw InputError(message: "cannot read \(path): \(reason(errno: errno))") }
            return
        }
        guard access(path, R_OK) == 0 else { throw InputError(message: "cannot read \(path): \(reason(errno: errno))") }
    }

    /// Reads the whole file at `path`, or throws a usage error with a short reason.
    static func read(_ path: String) throws -> Data {
        try requireReadable(path)
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw InputError(message: "cannot read \(path): \(reason(error))")
        }
    }

    /// Writes `data` to `path`, or throws a usage error "cannot write PATH: reason".
    ///
    /// An existing file is replaced, unless it is a SQLite database or write-ahead log (a ledger,
    /// the one `--db` names included, or its `-wal`): an `--out` that names one by mistake would
    /// destroy it, so that is refused.
    static func write(_ data: Data, to path: String) throws {
        guard !path.isEmpty else { throw InputError(message: "cannot write an empty path: name a file") }
        // Foundation's error for a directory is a bare "error 512".
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw InputError(message: "cannot write \(path): is a directory")
        }
        if let kind = databaseKind(at: path) {
            throw InputError(message: "cannot write \(path): it is \(kind) (a ledger?); refusing to overwrite it: name another file")
        }
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw InputError(message: "cannot write \(path): \(reason(error))")
        }
    }

    /// "a SQLite database" or "a SQLite write-ahead log" when `path` is a regular file that starts
    /// like one, else `nil` (no file, not regular, unreadable, or other content). Opens only
    /// regular files, so a FIFO never blocks it.
    static func databaseKind(at path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 16)
        let count = head.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, 16) }
        if count == 16, head == Array("SQLite format 3\0".utf8) { return "a SQLite database" }
        // The WAL header's magic number, big-endian: 0x377f0682 or 0x377f0683.
        if count >= 4, head[0] == 0x37, head[1] == 0x7f, head[2] == 0x06, head[3] & 0xfe == 0x82 { return "a SQLite write-ahead log" }
        return nil
    }

    /// A file error as "PATH: reason" when Foundation names the file, else the short reason alone.
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        let path = nsError.userInfo[NSFilePathErrorKey] as? String ?? (nsError.userInfo[NSURLErrorKey] as? URL)?.path
        return path.map { "\($0): \(reason(error))" } ?? reason(error)
    }

    /// A short reason for a file error: the POSIX error behind a Foundation error when there is
    /// one ("no such file or directory"), else the error's own description.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain { return reason(errno: Int32(nsError.code)) }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return reason(errno: Int32(underlying.code))
        }
        if nsError.domain == NSCocoaErrorDomain {
            switch CocoaError.Code(rawValue: nsError.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file"
            case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "no space left on device"
            case .fileWriteVolumeReadOnly: return "read-only file system"
            default: return nsError.localizedDescription
            }
        }
        return String(describing: error)
    }

    /// `strerror(code)` in lower case, e.g. "no such file or directory".
    static func reason(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }
}
