/// How long moving a file may take in all, whichever protocol carries it (a fetch, a LocalSend
/// upload, a KDE Connect payload): a start, and a second per `minimumBytesPerSecond`.
package enum TransferAllowance {
    /// The slowest a device may move a file on average: past it, the transfer ends at its deadline
    /// (a hexd peer resumes a fetch on a new connection).
    package static let minimumBytesPerSecond: Int64 = 256 * 1024

    /// How long moving `bytes` may take in all.
    package static func forBytes(_ bytes: Int64) -> Duration {
        .seconds(30) + .seconds(Double(bytes) / Double(minimumBytesPerSecond))
    }
}
