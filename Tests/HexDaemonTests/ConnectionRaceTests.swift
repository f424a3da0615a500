import HexEngine
import HexHarness
import HexNet
import HexTLS
import HexTestSupport
import Testing

@testable import HexDaemon

/// Racing a peer's candidate addresses (RFC 8305): the pure decisions, then real loopback
/// sockets and a real TLS handshake.
@Suite(.timeLimit(.minutes(5))) struct ConnectionRaceTests {
    private typealias Race = ConnectionRace<String>

    private struct Refused: Error {}

    @Test func eachCandidateStartsWhenTheOneBeforeFailsOrHasHadItsDelay() {
        var race = Race(candidates: 3)
        guard case .start(1) = race.take(.delayOver(0), pastDeadline: false) else {
            Issue.record("the delay did not start the second")
            return
        }
        guard case .wait = race.take(.delayOver(0), pastDeadline: false) else {
            Issue.record("a delay started a candidate twice")
            return
        }
        guard case .start(2) = race.take(.failed(1, "b: refused", Refused()), pastDeadline: false) else {
            Issue.record("a failure did not start the next at once")
            return
        }
        guard case .wait = race.take(.delayOver(1), pastDeadline: false) else {
            Issue.record("a delay that is over after a failure started something")
            return
        }
        guard case .won("c") = race.take(.opened("c"), pastDeadline: false) else {
            Issue.record("the first to connect did not win")
            return
        }
    }

    @Test func whenAllFailTheLastErrorNamesTheOthers() {
        var race = Race(candidates: 2)
        guard
            case .start(1) = race.take(
                .failed(0, "a: refused", SendError.undelivered("refused")),
                pastDeadline: false)
        else {
            Issue.record("the second did not start")
            return
        }
        guard
            case .lost = race.take(
                .failed(1, "b: wrong key", SendError.undelivered("b proved another key")),
                pastDeadline: false)
        else {
            Issue.record("not lost")
            return
        }
        #expect("\(race.failure)".contains("b proved another key (tried before: a: refused)"), "\(race.failure)")
    }

    @Test func pastTheDeadlineOrCancelledNothingMoreStarts() {
        var late = Race(candidates: 3)
        guard case .wait = late.take(.delayOver(0), pastDeadline: true),
            case .lost = late.take(.failed(0, "a", SendError.undelivered("timed out")), pastDeadline: true)
        else {
            Issue.record("a candidate started past the deadline")
            return
        }
        var cancelled = Race(candidates: 3)
        _ = cancelled.take(.delayOver(0), pastDeadline: false)
        guard case .wait = cancelled.take(.failed(1, "b", CancellationError()), pastDeadline: false),
            case .lost = cancelled.take(.failed(0, "a", CancellationError()), pastDeadline: false)
        else {
            Issue.record("a cancelled race went on")
            return
        }
        #expect(cancelled.failure is CancellationError)
    }

    /// The address tried first takes the connection and never answers the TLS handshake (a host
    /// that took the peer's old address, or a replay's source); the next candidate, dialled after
    /// the race delay, proves the key and carries the send, long before the deadline that the
    /// first would have used up.
    @Test func aSilentFirstAddressCostsTheRaceDelayNotTheDeadline() async throws {
        let directory = try TemporaryDirectory()
        func context(_ name: String) throws -> TLSContext {
            try TLSContext(
                identity: try TLSIdentity.loadOrCreate(
                    keyPath: directory.file(name + ".key"), certificatePath: directory.file(name + ".crt"),
                    commonName: "hexd " + name
                ).0)
        }
        let server = try context("server")
        let client = try context("client")
        // The kernel completes its connections; nothing reads them.
        let silent = try StreamListener.tcp(address: .loopback, port: 0)
        let honest = try StreamListener.tcp(address: .loopback, port: 0)
        let served = Task {
            let stream = try await TLSStream.handshake(
                over: try await honest.accept(), context: server,
                as: .server, timeout: .seconds(30))
            let connection = StreamConnection(stream: stream, maximumLineLength: 1_000)
            guard case .line(let line)? = try await connection.readLine(timeout: .seconds(30)) else { return "" }
            return "\(stream.peer) " + String(decoding: line, as: UTF8.self)
        }
        defer { served.cancel() }
        let candidates = [Endpoint(.loopback, port: silent.port), Endpoint(.loopback, port: honest.port)]
        let channel = try await EnvelopeSender.Channel.open(
            to: candidates, security: .tls(client, expected: server.identity.fingerprint),
            // Far past the race delay: on a machine saturated by other work (the whole suite starting
            // at once beside two fuzzers) this once ran past a 10 s deadline. The race is checked by
            // which candidate carried the send, not by the time.
            deadline: .now + .seconds(30), maximumLineLength: 1_000)
        #expect(channel.endpoint == candidates[1])
        #expect(channel.peerKey == server.identity.fingerprint)
        try await channel.write(line: Array("hello".utf8), deadline: .now + .seconds(30))
        #expect(try await served.value == "\(client.identity.fingerprint) hello")
        withExtendedLifetime(silent) {}
    }
}
