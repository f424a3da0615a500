import Glibc

/// A disk's room as an unprivileged user may use it.
package enum DiskSpace {
    /// The free space and size in bytes of the disk holding `path`; nil when it cannot be read.
    package static func of(_ path: String) -> (free: Int, size: Int)? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        let blockSize = Int(clamping: stats.f_frsize)
        let (free, freeOverflow) = Int(clamping: stats.f_bavail).multipliedReportingOverflow(by: blockSize)
        let (size, sizeOverflow) = Int(clamping: stats.f_blocks).multipliedReportingOverflow(by: blockSize)
        return (freeOverflow ? .max : free, sizeOverflow ? .max : size)
    }
}
