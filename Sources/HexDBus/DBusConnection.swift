import Glibc
import HexNet
import Synchronization

/// A connection to a message bus: authenticated (SASL `EXTERNAL`, the kernel vouches for the
/// user), registered (`Hello`), with method calls matched to their replies and signals handed to
/// `signals`. Everything read passes `DBusMessageReader` and its bound; at most
/// `maximumPendingCalls` calls wait at once, each until its deadline. A connection lives until
/// `close()` or until the bus ends it (its reader holds it): close the ones you are done with.
public final class DBusConnection: Sendable {
    public static let maximumPendingCalls = 64
    /// Signals not yet taken are dropped past this many (the oldest first).
    public static let signalBuffer = 64

    private let socket: Socket
    /// The name the bus gave this connection.
    public let uniqueName: String
    /// Signals, and the method calls the bus routes here (answered with `reply` or `replyError`).
    public let signals: AsyncStream<DBusMessage>

    private struct State {
        var nextSerial: UInt32 = 1
        var pending: [UInt32: CheckedContinuation<DBusMessage, any Error>] = [:]
        var closed: DBusError?
        var lastWrite: Task<Void, any Error>?
    }

    private let state: Mutex<State>
    private let signalContinuation: AsyncStream<DBusMessage>.Continuation
    private let reading: Mutex<Task<Void, Never>?> = Mutex(nil)

    private init(
        socket: Socket, uniqueName: String, state: State, signals: AsyncStream<DBusMessage>,
        continuation: AsyncStream<DBusMessage>.Continuation
    ) {
        self.socket = socket
        self.uniqueName = uniqueName
        self.state = Mutex(state)
        self.signals = signals
        signalContinuation = continuation
    }

    /// Connects, authenticates and says `Hello`.
    /// - Throws: `DBusError` or a socket error when the bus cannot be reached or refuses.
    public static func connect(to address: DBusAddress, timeout: Duration = .seconds(5)) async throws
        -> DBusConnection
    {
        let socket =
            switch address {
            case .path(let path): try StreamConnector.unix(path: path)
            case .abstract(let name): try StreamConnector.unix(abstract: name)
            }
        var reader = DBusMessageReader()
        try await authenticate(socket, reader: &reader, timeout: timeout)
        var hello = DBusMessage.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")
        hello.serial = 1
        try await socket.write(hello.encoded(), timeout: timeout)
        let deadline = ContinuousClock.now + timeout
        var reply: DBusMessage?
        while reply == nil {
            if let message = try reader.next() {
                if message.replySerial == 1 { reply = message }
                continue
            }
            try await readMore(socket, into: &reader, deadline: deadline)
        }
        guard let reply, reply.kind == .methodReturn, let name = reply.body.first?.stringValue else {
            throw DBusError.connection("the bus refused Hello: \(reply?.errorName ?? "no name given")")
        }
        let (signals, continuation) = AsyncStream.makeStream(
            of: DBusMessage.self,
            bufferingPolicy: .bufferingNewest(signalBuffer))
        let connection = DBusConnection(
            socket: socket, uniqueName: name, state: State(nextSerial: 2),
            signals: signals, continuation: continuation)
        let task = Task { [reader] in await connection.readMessages(reader) }
        connection.reading.withLock { $0 = task }
        return connection
    }

    /// SASL: a zero byte, `AUTH EXTERNAL <uid in hex>`, then `BEGIN` once the bus says `OK`.
    private static func authenticate(_ socket: Socket, reader: inout DBusMessageReader, timeout: Duration)
        async throws
    {
        let uid = Array(String(getuid()).utf8).map { String($0, radix: 16) }.joined()
        try await socket.write([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8), timeout: timeout)
        let deadline = ContinuousClock.now + timeout
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            guard line.count < 512 else { throw DBusError.connection("the bus's authentication line is too long") }
            let count = try await socket.read(maximumCount: 512, timeout: deadline - .now) { line += $0 }
            guard count > 0 else { throw DBusError.connection("the bus closed the connection while authenticating") }
        }
        guard let end = line.firstIndex(of: UInt8(ascii: "\n")), line.starts(with: Array("OK ".utf8)) else {
            throw DBusError.connection(
                "the bus refused EXTERNAL authentication: "
                    + String(decoding: line.prefix(200), as: UTF8.self))
        }
        try await socket.write(Array("BEGIN\r\n".utf8), timeout: timeout)
        // The bus sends nothing more before BEGIN; anything it did is the start of a message.
        reader.append(line[(end + 1)...])
    }

    private static func readMore(
        _ socket: Socket, into reader: inout DBusMessageReader, deadline: ContinuousClock.Instant
    ) async throws {
        var chunk: [UInt8] = []
        let count = try await socket.read(maximumCount: 65_536, timeout: deadline - .now) { chunk += $0 }
        guard count > 0 else { throw DBusError.connection("the bus closed the connection") }
        reader.append(chunk)
    }

    private func readMessages(_ reader: DBusMessageReader) async {
        var reader = reader
        var ending = DBusError.connection("the bus closed the connection")
        reading: while !Task.isCancelled {
            do {
                while let message = try reader.next() { deliver(message) }
                var chunk: [UInt8] = []
                guard try await socket.read(maximumCount: 65_536, timeout: nil, { chunk += $0 }) > 0 else { break }
                reader.append(chunk)
            } catch let error as DBusError {
                ending = error
                break reading
            } catch {
                ending = .connection("\(error)")
                break reading
            }
        }
        close(ending)
    }

    private func deliver(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            guard let serial = message.replySerial,
                let waiting = state.withLock({ $0.pending.removeValue(forKey: serial) })
            else { return }
            waiting.resume(returning: message)
        case .signal, .methodCall:
            signalContinuation.yield(message)
        }
    }

    /// Ends the connection: waiting calls fail with `reason`, `signals` finishes.
    public func close(_ reason: DBusError = .connection("closed")) {
        let waiting = state.withLock { state in
            if state.closed == nil { state.closed = reason }
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        waiting.forEach { $0.resume(throwing: reason) }
        signalContinuation.finish()
        reading.withLock { $0?.cancel() }
        socket.shutdown()
    }

    /// Whether the connection has ended (the bus went away, or `close`).
    public var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// Calls a method and returns its reply.
    /// - Throws: `DBusError.remote` for an error reply, `.timedOut` past `timeout`, `.connection`
    ///   when the bus is gone or too many calls wait.
    @discardableResult
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(5)) async throws -> DBusMessage {
        var message = message
        let what = "\(message.interface ?? "").\(message.member ?? "")"
        message.serial = try takeSerial(forCall: true)
        let serial = message.serial
        let bytes = message.encoded()
        let timer = Task {
            try await Task.sleep(for: timeout)
            cancelCall(serial, .timedOut(what))
        }
        defer { timer.cancel() }
        let reply = try await withCheckedThrowingContinuation { continuation in
            // Waiting before the call is written: its reply cannot come first.
            let closed = state.withLock { state -> DBusError? in
                if let closed = state.closed { return closed }
                state.pending[serial] = continuation
                return nil
            }
            if let closed { return continuation.resume(throwing: closed) }
            Task {
                do {
                    try await write(bytes, timeout: timeout)
                } catch {
                    cancelCall(serial, .connection("cannot write to the bus: \(error)"))
                }
            }
        }
        if reply.kind == .error {
            throw DBusError.remote(name: reply.errorName ?? "an error", message: reply.body.first?.stringValue ?? "")
        }
        return reply
    }

    /// Answers `call`, a method call the bus routed here, with `body`; nothing when it asked for no reply.
    /// - Throws: `DBusError.connection` when the bus is gone; a socket error when it cannot be written.
    public func reply(to call: DBusMessage, _ body: [DBusValue] = []) async throws {
        var reply = DBusMessage(kind: .methodReturn, destination: call.sender, body: body)
        reply.replySerial = call.serial
        try await answer(call, with: reply)
    }

    /// Answers `call` with the error `name` (`org.freedesktop.DBus.Error.UnknownMethod`…) and a text.
    /// - Throws: as `reply` does.
    public func replyError(to call: DBusMessage, name: String, _ text: String) async throws {
        var reply = DBusMessage(kind: .error, destination: call.sender, body: [.string(text)])
        reply.errorName = name
        reply.replySerial = call.serial
        try await answer(call, with: reply)
    }

    private func answer(_ call: DBusMessage, with reply: DBusMessage) async throws {
        guard call.kind == .methodCall, call.flags & 0x1 == 0 else { return }
        var reply = reply
        reply.serial = try takeSerial(forCall: false)
        try await write(reply.encoded(), timeout: .seconds(5))
    }

    /// The next message's serial, unless the connection has ended or (for a call) too many calls wait.
    private func takeSerial(forCall: Bool) throws(DBusError) -> UInt32 {
        try state.withLock { state throws(DBusError) -> UInt32 in
            if let closed = state.closed { throw closed }
            guard !forCall || state.pending.count < Self.maximumPendingCalls else {
                throw DBusError.connection("\(Self.maximumPendingCalls) calls wait already")
            }
            defer { state.nextSerial = state.nextSerial == .max ? 1 : state.nextSerial + 1 }
            return state.nextSerial
        }
    }

    private func cancelCall(_ serial: UInt32, _ error: DBusError) {
        state.withLock { $0.pending.removeValue(forKey: serial) }?.resume(throwing: error)
    }

    /// Writes whole messages one after another, never interleaved.
    private func write(_ bytes: [UInt8], timeout: Duration) async throws {
        let task = state.withLock { state in
            let previous = state.lastWrite
            let task = Task { [socket] in
                _ = await previous?.result
                try await socket.write(bytes, timeout: timeout)
            }
            state.lastWrite = task
            return task
        }
        try await task.value
    }

    /// Asks the bus to route signals matching `rule` here (`type='signal',interface='…'`).
    public func addMatch(_ rule: String) async throws {
        try await call(
            .call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch",
                [.string(rule)]))
    }
}
