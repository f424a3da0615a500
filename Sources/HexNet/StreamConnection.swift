/// A connected stream (TCP or Unix, plain or TLS) that reads and writes newline-terminated lines.
///
/// Used by one task at a time: the framer's buffer is not shared. It holds no read buffer between
/// reads, so an idle connection costs only the bytes of the line it has begun.
public final class StreamConnection {
    /// The bytes underneath: the connection, or TLS over it.
    public let stream: any ByteStream
    /// The connection underneath.
    public var channel: any ByteChannel { stream.channel }
    private var framer: LineFramer
    /// When the first byte of the line being received arrived (at the latest).
    private var lineStartedAt: ContinuousClock.Instant?
    /// When the last read returned bytes.
    private var lastReadAt: ContinuousClock.Instant?
    /// Told how much memory this connection holds for begun lines, after every read.
    private let budget: PartialLineBudget?

    public init(stream: any ByteStream, maximumLineLength: Int, budget: PartialLineBudget? = nil) {
        self.stream = stream
        self.budget = budget
        framer = LineFramer(maximumLineLength: maximumLineLength)
    }

    /// A connection over the socket itself.
    public convenience init(socket: Socket, maximumLineLength: Int, budget: PartialLineBudget? = nil) {
        self.init(stream: socket, maximumLineLength: maximumLineLength, budget: budget)
    }

    deinit { budget?.release(channel) }

    /// The next line (without its ending), `.lineTooLong`, or nil when the peer closed the stream.
    ///
    /// - Parameter timeout: the deadline for the whole line, counted from this call (not restarted
    ///   by each byte); nil waits forever.
    /// - Throws: `SocketError.timedOut` past the deadline.
    public func readLine(timeout: Duration?) async throws -> LineFramer.Item? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        return try await readLine { _, _ in deadline }
    }

    /// The next line from a peer who must keep `pace`: begin a line within `pace.idle`, and once
    /// begun, finish it within `pace.grace` plus one second per `pace.minimumBytesPerSecond`
    /// bytes received. A peer trickling bytes cannot hold the connection: no byte restarts a clock.
    public func readLine(pace: LinePace) async throws -> LineFramer.Item? {
        let idleDeadline = ContinuousClock.now + pace.idle
        return try await readLine { lineStart, pending in
            guard let lineStart else { return idleDeadline }
            return lineStart + pace.grace + .seconds(Double(pending) / Double(max(pace.minimumBytesPerSecond, 1)))
        }
    }

    /// The next line already received (or `.lineTooLong`), without reading or waiting: nil when
    /// the bytes at hand hold no complete line. A peer that pipelines sends several lines in one
    /// segment; taking them together lets them be acted on and answered together.
    public func bufferedLine() -> LineFramer.Item? {
        guard let item = framer.next() else { return nil }
        // Bytes after the line arrived with the read that ended it: the next line began by then,
        // not when the line just returned began.
        lineStartedAt = framer.pendingByteCount > 0 ? lastReadAt : nil
        budget?.hold(framer.heldByteCount, by: channel)
        return item
    }

    /// Reads until a line is complete, the stream ends or `deadline` (given when the current line
    /// began and how many of its bytes are held) passes.
    private func readLine(
        deadline: (_ lineStart: ContinuousClock.Instant?, _ pending: Int) -> ContinuousClock.Instant?
    ) async throws -> LineFramer.Item? {
        while true {
            if let item = bufferedLine() { return item }
            var timeout: Duration?
            if let deadline = deadline(lineStartedAt, framer.pendingByteCount) {
                timeout = deadline - .now
                guard let remaining = timeout, remaining > .zero else { throw SocketError.timedOut("read a line") }
            }
            let count = try await stream.read(maximumCount: 65_536, timeout: timeout) { framer.append($0) }
            guard count > 0 else {
                budget?.hold(0, by: channel)
                return nil
            }
            lastReadAt = .now
            if lineStartedAt == nil && framer.pendingByteCount > 0 { lineStartedAt = lastReadAt }
            budget?.hold(framer.heldByteCount, by: channel)
        }
    }

    /// Reads raw bytes, not lines: those that came after the last line first, then from the
    /// stream, at most `maximumCount` at a time, handed to `take` (valid only during the call).
    /// - Returns: how many were read, 0 at the end of the stream.
    public func readBytes(
        maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) async throws -> Int {
        let pending = framer.takePending(maximumCount: maximumCount)
        if !pending.isEmpty {
            try pending.withUnsafeBufferPointer { try take($0) }
            return pending.count
        }
        var failure: (any Error)?
        let count = try await stream.read(maximumCount: maximumCount, timeout: timeout) { bytes in
            do { try take(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
        return count
    }

    /// Writes `line` followed by `\n`.
    public func writeLine(_ line: some Collection<UInt8>, timeout: Duration?) async throws {
        try await stream.write(Array(line) + [UInt8(ascii: "\n")], timeout: timeout)
    }

    /// Writes each line followed by `\n`, all in one write.
    public func writeLines(_ lines: [[UInt8]], timeout: Duration?) async throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.count + 1 })
        for line in lines {
            bytes += line
            bytes.append(UInt8(ascii: "\n"))
        }
        try await stream.write(bytes, timeout: timeout)
    }
}

/// How fast a peer must send a line (see `StreamConnection.readLine(pace:)`).
public struct LinePace: Sendable, Hashable {
    /// How long a connection may wait before a line begins.
    public var idle: Duration
    /// How long a begun line may take, on top of the time its bytes earn at the minimum rate.
    public var grace: Duration
    public var minimumBytesPerSecond: Int

    public init(idle: Duration, grace: Duration, minimumBytesPerSecond: Int) {
        self.idle = idle
        self.grace = grace
        self.minimumBytesPerSecond = minimumBytesPerSecond
    }
}
