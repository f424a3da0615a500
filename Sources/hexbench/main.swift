import Glibc
import HexCommandLine
import HexKit

let help = """
    USAGE: hexbench <benchmark> [--count <n>] [--rounds <n>] [--quick] [--hexctl <path>]

    Benchmarks of hexd. Every figure is printed beside a baseline measured in the same run; build
    with -c release for meaningful numbers (swift run -c release hexbench ...).

    BENCHMARKS:
      decode    Tolerant envelope decoding (Envelope.decode) against JSONDecoder decoding
                the same lines into plain Codable structs. Default: 20000 envelopes, 5 rounds.
      store     Receiving Stores into a real SQLite file (decode, HexManager, commit) with each
                durability setting (synchronous NORMAL and FULL), against decoding alone.
                Default: 5000 envelopes, 3 rounds.
      transfer  Two hexd processes (beside hexbench) on loopback: time until both list each other,
                time until a SIGKILLed one leaves the table (against 3 intervals), and send -> Ack
                latency (plaintext and over TLS 1.3 with its handshake, direct and through the
                control socket, and hexctl's wall time) against a plain TCP round trip of the
                same bytes; OpenSSL's own resumed exchange (two threads, blocking sockets), the
                least a resumed send can cost above plaintext. Default: 1000 sends, 5 rounds.
      delivery  One hexd (beside hexbench): acked hexes per second from 1 and from 8 pipelined
                senders, against Python committing the same rows one transaction each (synced:
                FULL, and not: NORMAL); syncs per 1000 pipelined hexes (strace); one hex's send
                to Ack on this disk and on /dev/shm (where a sync costs nothing); RSS, hexctl
                status and hexctl inbox --limit 50 with 100000 hexes stored, and the time to ack
                a 100000-link hex; how soon a send queued for a stopped peer is delivered once the
                peer is started again. Default: 8000 hexes per run of senders.
      registry  Link answers absorbed per second by the share-link query registry, 8 threads
                answering, and the time from the last answer to delivery, against the same
                calls to an actor that only counts. Default: 200000 answers.
      hostile   One hexd (beside hexbench) with its default budgets under attack from other
                loopback addresses: honest send -> Ack latency while 1000 connections trickle
                and 1000 sit idle, against the same sends before; RSS while 500 connections hold
                1 MiB unfinished lines; a flood of 100000 beacons of invented peers (table size,
                RSS, CPU, time until idle CPU is back to its baseline). Default: 1000 sends.
      identity  Checking a signed beacon against decoding an unsigned one; a hexd's CPU under
                5000 beacons a second (unsigned, signed, forged); its RSS with 4096 TLS
                connections presenting ordinary and 95 KB certificates (handshakes not budgeted),
                and 10 s after they closed; while 4000 bare ClientHellos a second arrive from 192
                addresses (the storm on one core, hexd on the other), a known peer's Store on a
                fresh TLS connection and hexctl send to a peer, against none, and hexd's CPU. The
                connections holding certificates are Python's (python3, ssl); the storm is
                hexbench's own. Default: 20000 beacons, 200 samples.

      fetch     Two hexd (beside hexbench): a file shared (hexctl share --to, hashed for its grant)
                against sha256sum on the same file; fetched over TLS (hexctl fetch) against a
                plain TLS copy of the same bytes by Python's ssl (read, sent, received, written);
                each daemon's resident memory above idle while it goes. --count: the file's MiB
                (default 1024). Default: 3 rounds.

      startup   What one hexctl command costs a script: hexctl --version, status and hexlist
                --limit 50 (a hexd with 20 hexes answering) against /bin/true, all started the
                same way in turns. --hexctl: the hexctl to measure (default: the one beside
                hexbench; the static build Examples/install.sh installs is what users run).
                Default: 200 runs of each.

      idle      What an idle hexd costs: context switches a second (all threads) and CPU share over
                a minute with no peers, one and thirty, against a minimal Python beaconer in the
                same run; fails when hexd with no peers uses over 5 % of a core (a loop that
                spins). --quick: 5 s and 3 peers.

    OPTIONS:
      --count <n>    Envelopes per round (transfer: sends; delivery: hexes; registry: answers;
                     identity: beacons checked in this process; fetch: the file's MiB; startup:
                     runs of each command).
      --rounds <n>   Rounds; the best round is reported.
      --hexctl <path>
                     startup: the hexctl binary to measure.
      --quick        hostile, identity and idle: attackers, floods and waits a few seconds long, for
                     checking that the benchmark runs (its figures then mean little).
      -h, --help     Show this help.
    """

var arguments = Array(CommandLine.arguments.dropFirst())
// Internal: the attackers of `hostile`, run as a process of their own so that their work is not
// counted in the honest sender's latency (`hexbench swarm PORT TRICKLING IDLE SECONDS`).
if arguments.first == "swarm" {
    exit(await HostileBenchmark.runSwarm(Array(arguments.dropFirst())))
}
// Internal: the storm of bare ClientHellos of `identity`, in a process of its own pinned to a core
// (`hexbench storm HELLO PORT COUNT PER-SECOND`).
if arguments.first == "storm" {
    exit(await IdentityBenchmark.runStorm(Array(arguments.dropFirst())))
}
// Internal: the fast sender of Tests/netns/quickshare-bench.sh (`hexbench quickshare-send HOST PORT FILE`).
if arguments.first == "quickshare-send" {
    exit(await QuickShareSend.run(Array(arguments.dropFirst())))
}
guard let benchmark = arguments.first, !["-h", "--help"].contains(benchmark) else {
    print(help)
    exit(arguments.isEmpty ? 64 : 0)
}
arguments.removeFirst()
var options: [String: Int] = [:]
var scale = Scale(quick: false)
var hexctlPath: String?
while let flag = arguments.first {
    arguments.removeFirst()
    if flag == "--quick" {
        scale = Scale(quick: true)
        continue
    }
    if flag == "--hexctl", let path = arguments.first {
        arguments.removeFirst()
        hexctlPath = path
        continue
    }
    guard ["--count", "--rounds"].contains(flag), let value = arguments.first.flatMap(Int.init), value > 0 else {
        exit(.usage, program: "hexbench", message: "bad option '\(flag)'; see hexbench --help")
    }
    arguments.removeFirst()
    options[flag] = value
}

do {
    let report: [String]
    switch benchmark {
    case "decode":
        report = try DecodeBenchmark(envelopeCount: options["--count"] ?? 20_000, rounds: options["--rounds"] ?? 5)
            .run()
    case "store":
        report = try StoreBenchmark(envelopeCount: options["--count"] ?? 5_000, rounds: options["--rounds"] ?? 3).run()
    case "registry":
        report = try await RegistryBenchmark(answers: options["--count"] ?? 200_000).run()
    case "hostile":
        report = try await HostileBenchmark(sends: options["--count"] ?? 1_000, scale: scale).run()
    case "identity":
        report = try await IdentityBenchmark(
            beacons: options["--count"] ?? 20_000, samples: scale.pick(200, quick: 20),
            scale: scale
        ).run()
    case "delivery":
        report = try await DeliveryBenchmark(hexes: options["--count"] ?? 8_000).run()
    case "fetch":
        report = try await FetchBenchmark(
            fileMebibytes: options["--count"] ?? 1_024,
            rounds: options["--rounds"] ?? 3
        ).run()
    case "startup":
        report = try await StartupBenchmark(runs: options["--count"] ?? 200, hexctl: hexctlPath).run()
    case "idle":
        report = try await IdleBenchmark(scale: scale).run()
    case "transfer":
        report = try await TransferBenchmark(sends: options["--count"] ?? 1_000, rounds: options["--rounds"] ?? 5).run()
    default:
        exit(.usage, program: "hexbench", message: "unknown benchmark '\(benchmark)'; see hexbench --help")
    }
    report.forEach { print($0) }
} catch {
    exit(.failure, program: "hexbench", message: "\(error)")
}
