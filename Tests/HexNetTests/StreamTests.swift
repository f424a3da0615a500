import Glibc
import HexHarness
import HexKit
import HexTestSupport
import HexTestTools
import Testing

@testable import HexNet

@Suite(.timeLimit(.minutes(5))) struct StreamTests {
    private func connectedSockets() async throws -> (client: Socket, server: Socket, listener: StreamListener) {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        async let accepted = listener.accept()
        let client = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        return (client, try await accepted, listener)
    }

    private func connectedPair(maximumLineLength: Int = 1_024) async throws -> (
        client: StreamConnection, server: StreamConnection, listener: StreamListener
    ) {
        let (client, server, listener) = try await connectedSockets()
        return (
            StreamConnection(socket: client, maximumLineLength: maximumLineLength),
            StreamConnection(socket: server, maximumLineLength: maximumLineLength), listener
        )
    }

    @Test func linesTravelBothWays() async throws {
        let (client, server, _) = try await connectedPair()
        try await client.writeLine(Array("hello".utf8), timeout: .seconds(5))
        try await client.writeLine(Array("wörld".utf8), timeout: .seconds(5))
        #expect(try await server.readLine(timeout: .seconds(5)) == .line(Array("hello".utf8)))
        #expect(try await server.readLine(timeout: .seconds(5)) == .line(Array("wörld".utf8)))
        try await server.writeLine(Array("ack".utf8), timeout: .seconds(5))
        #expect(try await client.readLine(timeout: .seconds(5)) == .line(Array("ack".utf8)))
        client.channel.shutdown()
        #expect(try await server.readLine(timeout: .seconds(5)) == nil, "the end of the stream reads as nil")
    }

    @Test func aMegabyteLineArrivesWhole() async throws {
        let (clientSocket, serverSocket, _) = try await connectedSockets()
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 3 << 20)
        // The writer blocks until the reader drains the socket, so it runs in its own task.
        let writer = Task {
            try await StreamConnection(socket: clientSocket, maximumLineLength: 0).writeLine(big, timeout: .seconds(10))
        }
        let server = StreamConnection(socket: serverSocket, maximumLineLength: 4 << 20)
        #expect(try await server.readLine(timeout: .seconds(10)) == .line(big))
        try await writer.value
    }

    @Test func aLineOverTheCapIsReported() async throws {
        let (client, server, _) = try await connectedPair(maximumLineLength: 100)
        try await client.writeLine([UInt8](repeating: 65, count: 500), timeout: .seconds(5))
        #expect(try await server.readLine(timeout: .seconds(5)) == .lineTooLong)
    }

    @Test func aSilentPeerTimesOut() async throws {
        let (client, server, _) = try await connectedPair()
        await #expect { _ = try await server.readLine(timeout: .milliseconds(100)) } throws: {
            ($0 as? SocketError)?.isTimeout == true
        }
        withExtendedLifetime(client) {}
    }

    @Test func cancellingATaskWakesItsRead() async throws {
        let (client, server, _) = try await connectedSockets()
        let reader = Task { try await StreamConnection(socket: server, maximumLineLength: 100).readLine(timeout: nil) }
        // Cancelled once parked on the reactor, so that the wake-up is what is tested.
        try await waitUntil("the read is parked", timeout: .seconds(10)) {
            Reactor.shared.hasReader(for: server.descriptor)
        }
        reader.cancel()
        await #expect(throws: CancellationError.self) { _ = try await reader.value }
        withExtendedLifetime(client) {}
    }

    @Test func aRefusedConnectionIsAClearError() async throws {
        // A port bound but not listening refuses every connection, and no other test can take it
        // meanwhile (a listener closed at once freed its port for anyone).
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(held, $0, length) == 0 && getsockname(held, $0, &length) == 0
            }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let endpoint = Endpoint(host: "127.0.0.1", port: port)
        await #expect { _ = try await StreamConnector.tcp(to: endpoint, timeout: .seconds(5)) } throws: { error in
            (error as? SocketError)?.code == ECONNREFUSED && "\(error)".contains("cannot connect to 127.0.0.1:\(port)")
        }
    }

    @Test func anUnknownHostIsAClearError() async throws {
        await #expect { _ = try await StreamConnector.resolve("no-such-host.invalid") } throws: {
            "\($0)".contains("cannot resolve no-such-host.invalid")
        }
        #expect(try await StreamConnector.resolve("localhost").isLoopback)
    }

    @Test func endpointsParseAsUsersWriteThem() {
        #expect(Endpoint(parsing: "192.168.1.20:18521") == Endpoint(host: "192.168.1.20", port: 18521))
        #expect(Endpoint(parsing: "laptop.local:1") == Endpoint(host: "laptop.local", port: 1))
        for bad in ["", "host", ":80", "host:", "host:0", "host:65536", "host:x", "::1:80"] {
            #expect(Endpoint(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func aPipelinedSenderKeepsItsPaceLongerThanTheGrace() async throws {
        let (client, server, _) = try await connectedPair(maximumLineLength: 1 << 20)
        let pace = LinePace(idle: .seconds(10), grace: .seconds(2), minimumBytesPerSecond: 1_000)
        let socket = client.channel
        // 150 lines of 100 bytes in 101-byte pieces, one every 20 ms: a line is always half
        // received, so the buffer never runs empty, for longer than the grace (3 s); yet every
        // line arrives far within its own deadline (2.1 s: a writer held up for a second on a
        // busy machine does not fail it).
        let writer = Task {
            let line = Array(repeating: UInt8(ascii: "x"), count: 99) + [UInt8(ascii: "\n")]
            let stream = Array(repeating: line, count: 150).flatMap { $0 }
            for chunk in stride(from: 0, to: stream.count, by: 101) {
                try await socket.write(Array(stream[chunk..<min(chunk + 101, stream.count)]), timeout: .seconds(5))
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        for index in 0..<150 {
            guard case .line(let line)? = try await server.readLine(pace: pace) else {
                Issue.record("line \(index) did not arrive")
                return
            }
            #expect(line.count == 99)
        }
        try await writer.value
    }

    @Test func aTricklingSenderIsCutOffAtItsLineDeadline() async throws {
        let (client, server, _) = try await connectedPair()
        let pace = LinePace(idle: .seconds(5), grace: .milliseconds(200), minimumBytesPerSecond: 1_000)
        let socket = client.channel
        // A byte every 20 ms for up to 20 s: an idle timer restarted by each byte would never fire.
        let writer = Task {
            for _ in 0..<1_000 {
                try await socket.write([UInt8(ascii: "x")], timeout: .seconds(5))
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        await #expect { _ = try await server.readLine(pace: pace) } throws: { ($0 as? SocketError)?.isTimeout == true }
        writer.cancel()
        #expect(await writer.result.isCancellation, "the writer was still trickling when the line's deadline passed")
    }
}

@Suite(.timeLimit(.minutes(5))) struct UnixSocketTests {
    @Test func aUnixListenerIsPrivateAndReplacesAStaleFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("control.sock")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("stale".utf8)))
        let listener = try StreamListener.unix(path: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        async let accepted = listener.accept()
        let client = StreamConnection(socket: try StreamConnector.unix(path: path), maximumLineLength: 100)
        let server = StreamConnection(socket: try await accepted, maximumLineLength: 100)
        try await client.writeLine(Array("{}".utf8), timeout: .seconds(5))
        #expect(try await server.readLine(timeout: .seconds(5)) == .line(Array("{}".utf8)))
    }

    @Test func aPathTooLongForSunPathIsAClearError() {
        let path = "/tmp/" + String(repeating: "d", count: 120)
        #expect { _ = try StreamListener.unix(path: path) } throws: { "\($0)".contains("1 to 107 bytes") }
    }

    @Test func noDaemonMeansConnectFails() async throws {
        let directory = try TemporaryDirectory()
        #expect { _ = try StreamConnector.unix(path: directory.file("none.sock")) } throws: {
            ($0 as? SocketError)?.code == ENOENT
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct DatagramTests {
    @Test func everySocketOnASharedPortHearsABroadcast() async throws {
        let first = try DatagramSocket(port: 0)
        let second = try DatagramSocket(port: first.port)
        let sender = try DatagramSocket(port: 0)
        try sender.send(Array("beacon".utf8), to: IPAddress("127.255.255.255")!, port: first.port)
        for socket in [first, second] {
            let datagram = try await socket.receive(maximumLength: 1_024)
            #expect(datagram.bytes == Array("beacon".utf8) && !datagram.truncated && datagram.senderPort == sender.port)
        }
    }

    @Test func anOversizedDatagramIsMarkedTruncated() async throws {
        let receiver = try DatagramSocket(address: .loopback, port: 0)
        let sender = try DatagramSocket(port: 0)
        try sender.send([UInt8](repeating: 1, count: 3_000), to: .loopback, port: receiver.port)
        let datagram = try await receiver.receive(maximumLength: 1_024)
        #expect(datagram.truncated && datagram.bytes.count == 1_024)
    }

    /// The broadcast addresses are those iproute2 reports for the interfaces that are up, and
    /// for an address with none the one its prefix gives (an empty list matches only a machine
    /// with none, such as a container with only `lo`).
    @Test func interfaceBroadcastAddressesAreTheOnesIPReports() async throws {
        let ip = try ExternalTool.require("ip")
        let listing = try await PackageExecutable.run(ip, ["-o", "-4", "addr", "show", "up"])
        #expect(listing.status == 0, "\(listing.standardError)")
        let reported = listing.standardOutput.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            if let brd = words.firstIndex(of: "brd"), brd + 1 < words.count { return String(words[brd + 1]) }
            // No broadcast address given: the subnet's highest, unless loopback or a /31 or /32.
            guard !line.contains(" lo "), let inet = words.firstIndex(of: "inet"), inet + 1 < words.count else {
                return nil
            }
            let parts = words[inet + 1].split(separator: "/")
            guard parts.count == 2, let address = IPv4Address(String(parts[0])), let prefix = Int(parts[1]),
                prefix < 31
            else { return nil }
            let mask = IPv4Address(networkOrder: (UInt32.max << (32 - prefix)).bigEndian)
            return NetworkInterfaces.directedBroadcast(address: address, netmask: mask, given: nil)?.description
        }
        let found = NetworkInterfaces.targets(of: NetworkInterfaces.addresses(), selection: .init())
            .compactMap(\.broadcast).map(\.description)
        #expect(
            Set(found) == Set(reported) && found.count == Set(found).count,
            "found \(found), ip reports \(reported)")
    }

    /// Each address is announced on or skipped with why: down, loopback, excluded by a glob, not
    /// among those named, no broadcast address, or one another interface covers.
    @Test func everyInterfaceIsAnnouncedOnOrSkippedWithWhy() throws {
        func address(
            _ name: String, _ text: String, prefix: Int, brd: String? = nil, up: Bool = true,
            loopback: Bool = false
        ) throws -> NetworkInterfaces.Address {
            let mask = IPv4Address(networkOrder: (UInt32.max << (32 - prefix)).bigEndian)
            return NetworkInterfaces.Address(
                interface: name, address: try #require(IPv4Address(text)), netmask: mask,
                broadcast: brd.flatMap(IPv4Address.init), isUp: up, isLoopback: loopback)
        }
        let machine = [
            try address("lo", "127.0.0.1", prefix: 8, loopback: true),
            try address("eth0", "192.168.1.20", prefix: 24, brd: "192.168.1.255"),
            try address("eth1", "10.77.0.1", prefix: 24),
            try address("wg0", "10.9.0.2", prefix: 32),
            try address("docker0", "172.17.0.1", prefix: 16, brd: "172.17.255.255"),
            try address("eth0", "192.168.1.21", prefix: 24, brd: "192.168.1.255"),
            try address("eth2", "10.1.0.1", prefix: 24, up: false),
        ]
        func plan(_ selection: NetworkInterfaces.Selection) -> [String] {
            NetworkInterfaces.targets(of: machine, selection: selection).map { target in
                "\(target.interface) \(target.address): " + (target.broadcast?.description ?? target.skipped ?? "?")
            }
        }
        #expect(
            plan(.init(excluding: ["docker*"])) == [
                "lo 127.0.0.1: loopback", "eth0 192.168.1.20: 192.168.1.255", "eth1 10.77.0.1: 10.77.0.255",
                "wg0 10.9.0.2: a /31 or /32 subnet has no broadcast address",
                "docker0 172.17.0.1: excluded by 'docker*'",
                "eth0 192.168.1.21: its broadcast address is eth0's", "eth2 10.1.0.1: down",
            ])
        #expect(
            plan(.init(including: ["eth1"])).filter { !$0.contains(": not among") }
                == ["lo 127.0.0.1: loopback", "eth1 10.77.0.1: 10.77.0.255", "eth2 10.1.0.1: down"])
        #expect(plan(.init(including: ["eth1"], excluding: ["eth?"])).contains("eth1 10.77.0.1: excluded by 'eth?'"))
    }

    /// An address set up without a broadcast address gets its subnet's; a given one is kept
    /// unless it is 0.0.0.0 or the address itself; a /31 or /32 has none.
    @Test func aMissingBroadcastAddressComesFromThePrefix() throws {
        let address = try #require(IPv4Address("10.77.0.1"))
        let mask24 = try #require(IPv4Address("255.255.255.0"))
        let computed = NetworkInterfaces.directedBroadcast(address: address, netmask: mask24, given: nil)
        #expect(computed?.description == "10.77.0.255")
        #expect(NetworkInterfaces.directedBroadcast(address: address, netmask: mask24, given: .any) == computed)
        #expect(NetworkInterfaces.directedBroadcast(address: address, netmask: mask24, given: address) == computed)
        let given = try #require(IPv4Address("10.77.0.127"))
        #expect(NetworkInterfaces.directedBroadcast(address: address, netmask: mask24, given: given) == given)
        let mask20 = try #require(IPv4Address("255.255.240.0"))
        #expect(
            NetworkInterfaces.directedBroadcast(address: address, netmask: mask20, given: nil)?.description
                == "10.77.15.255")
        for mask in ["255.255.255.254", "255.255.255.255"] {
            #expect(
                NetworkInterfaces.directedBroadcast(
                    address: address, netmask: try #require(IPv4Address(mask)),
                    given: nil) == nil)
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct DescriptorReuseTests {
    /// Descriptors are reused as soon as a socket closes. A readiness wait must not be lost
    /// because the previous socket with the same number was still registered with the event
    /// loop (libdispatch needs its cancel handler to run first): such a wait never ends, so each
    /// step's 10 s bound catches it. Bounded: 3000 round trips.
    @Test func rapidConnectRoundTripCloseCyclesNeverLoseAnEvent() async throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let server = Task {
            while let socket = try? await listener.accept() {
                Task {
                    let connection = StreamConnection(socket: socket, maximumLineLength: 100)
                    while case .line(let line)? = try? await connection.readLine(timeout: .seconds(5)) {
                        try? await connection.writeLine(line, timeout: .seconds(5))
                    }
                }
            }
        }
        defer { server.cancel() }
        for index in 0..<3_000 {
            let client = StreamConnection(
                socket: try await StreamConnector.tcp(
                    to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(10)), maximumLineLength: 100
            )
            try await client.writeLine(Array("\(index)".utf8), timeout: .seconds(10))
            #expect(try await client.readLine(timeout: .seconds(10)) == .line(Array("\(index)".utf8)))
        }
    }
}

extension Result where Failure == any Error {
    /// The task ended by cancellation (it was still running when cancelled).
    var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}
