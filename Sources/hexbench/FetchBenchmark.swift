import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet

/// Sharing and fetching a large file between two hexd on loopback, against tools we did not
/// write, in the same run: the grant's hashing against `sha256sum` on the same file, and the
/// fetch over TLS against a plain TLS copy of the same bytes (Python's `ssl`, which is OpenSSL:
/// one process reads the file and sends it, another receives it and writes it to disk); and the
/// memory each daemon takes above its idle resident size while the file goes.
struct FetchBenchmark {
    /// The file's size.
    let fileMebibytes: Int
    let rounds: Int

    func run() async throws -> [String] {
        let work = try TemporaryDirectory()
        let payload = work.file("payload.bin")
        let made = try await PackageExecutable.run(
            "/bin/sh", ["-c", "head -c \(fileMebibytes)M /dev/urandom > \"$0\"", payload], timeout: .seconds(300))
        guard made.status == 0 else { throw BenchFailure("cannot make the payload: \(made.standardError)") }
        var report = ["fetch: a \(fileMebibytes) MiB file, best of \(rounds) rounds, page cache warm"]

        let port = try DatagramSocket(address: .loopback, port: 0).port
        let ada = try BenchDaemon(name: "ada", discoveryPort: port, interval: 0.5)
        let grace = try BenchDaemon(
            name: "grace", discoveryPort: port, interval: 0.5,
            extraArguments: ["--downloads", work.file("downloads")])
        _ = try await ada.waitForStatus()
        _ = try await grace.waitForStatus()
        try await ada.waitForPeer("grace")
        try await grace.waitForPeer("ada")

        let sha256sum = try await best { try await timeSHA256Sum(payload) }
        let granting = try await best { try await timeShare(payload, from: ada) }
        report.append(
            String(
                format: "fetch: hashing for a grant (hexctl share, to the answer): %.0f ms; sha256sum: "
                    + "%.0f ms; %.0f %% of sha256sum's speed (target: at least 80 %%)",
                granting * 1_000, sha256sum * 1_000, sha256sum / granting * 100))

        let baseline = try await best { try await timeTLSCopy(payload, in: work) }
        let idle = (
            ada: ProcessFigures.residentBytes(of: ada.pid) ?? 0,
            grace: ProcessFigures.residentBytes(of: grace.pid) ?? 0
        )
        var peaks = (ada: idle.ada, grace: idle.grace)
        let fetching = try await best {
            let pids = (ada: ada.pid, grace: grace.pid)
            let sampler = Task {
                var peak = (ada: 0, grace: 0)
                while !Task.isCancelled {
                    peak.ada = max(peak.ada, ProcessFigures.residentBytes(of: pids.ada) ?? 0)
                    peak.grace = max(peak.grace, ProcessFigures.residentBytes(of: pids.grace) ?? 0)
                    try? await Task.sleep(for: .milliseconds(10))
                }
                return peak
            }
            let seconds = try await timeFetch(into: work.file("downloads"), by: grace)
            sampler.cancel()
            let peak = await sampler.value
            peaks = (max(peaks.ada, peak.ada), max(peaks.grace, peak.grace))
            return seconds
        }
        let mebibytesPerSecond = { (seconds: Double) in Double(fileMebibytes) / seconds }
        report.append(
            String(
                format: "fetch: hexctl fetch over TLS: %.0f MiB/s; a plain TLS copy (Python ssl): "
                    + "%.0f MiB/s; %.0f %% of the copy (target: at least 70 %%)",
                mebibytesPerSecond(fetching), mebibytesPerSecond(baseline), baseline / fetching * 100))
        report.append(
            "fetch: resident memory above idle while the file goes: "
                + "serving \(mebibytes(peaks.ada - idle.ada)) (idle \(mebibytes(idle.ada))), "
                + "fetching \(mebibytes(peaks.grace - idle.grace)) (idle \(mebibytes(idle.grace))); "
                + "target: at most 16 MiB each")
        return report
    }

    /// The least of `rounds` timings.
    private func best(_ timing: () async throws -> Double) async throws -> Double {
        var least = Double.infinity
        for _ in 0..<rounds { least = min(least, try await timing()) }
        return least
    }

    private func timeSHA256Sum(_ path: String) async throws -> Double {
        let start = ContinuousClock.now
        let result = try await PackageExecutable.run("/usr/bin/sha256sum", [path], timeout: .seconds(300))
        guard result.status == 0 else { throw BenchFailure("sha256sum: \(result.standardError)") }
        return (ContinuousClock.now - start).inSeconds
    }

    /// A share to grace, to the daemon's first answer (`queued`: the file was hashed and granted).
    private func timeShare(_ path: String, from daemon: BenchDaemon) async throws -> Double {
        let request = ControlRequest.share(
            ShareRequest(
                files: [path], description: "bench", destination: .peer(SendOptions(to: "grace", wait: false))))
        let start = ContinuousClock.now
        let response = try await ControlClient(socketPath: daemon.controlPath).request(request, timeout: .seconds(300))
        guard response.queued != nil else { throw BenchFailure("share: \(response.error?.message ?? "no answer")") }
        return (ContinuousClock.now - start).inSeconds
    }

    /// Fetches the newest hex's file into `folder` (emptied first), to the fetch's last answer.
    private func timeFetch(into folder: String, by daemon: BenchDaemon) async throws -> Double {
        try? FileManager.default.removeItem(atPath: folder)
        let client = try ControlClient(socketPath: daemon.controlPath)
        var newest: HexSummary?
        _ = try await client.list(.inboxList(ListPage(limit: 1)), timeout: .seconds(10)) { newest = $0.summary }
        guard let hex = newest else { throw BenchFailure("grace has no hex to fetch") }
        let start = ContinuousClock.now
        var fetched = false
        _ = try await ControlClient(socketPath: daemon.controlPath).list(
            .fetch(FetchRequest(hex: hex.id.uuidString, numbers: [1])), timeout: .seconds(300)
        ) { fetched = fetched || $0.fetch?.state == .fetched }
        guard fetched else { throw BenchFailure("the fetch did not end fetched") }
        return (ContinuousClock.now - start).inSeconds
    }

    /// A TLS 1.3 copy of `path` on loopback by Python's `ssl`: one process sends the file, the
    /// other writes what it receives to disk and says how long it took from its connect.
    private func timeTLSCopy(_ path: String, in work: TemporaryDirectory) async throws -> Double {
        if !FileManager.default.fileExists(atPath: work.file("copy.crt")) {
            try await makeCertificate("copy", names: 0, in: work)
            guard FileManager.default.createFile(atPath: work.file("copy.py"), contents: Data(Self.copier.utf8)) else {
                throw BenchFailure("cannot write copy.py")
            }
        }
        let portFile = work.file("copy.port")
        try? FileManager.default.removeItem(atPath: portFile)
        let server = try SpawnedProcess(
            "/usr/bin/env",
            [
                "python3", work.file("copy.py"), "serve", work.file("copy.crt"), work.file("copy.key"), path, portFile,
            ], standardError: 2)
        defer { server.waitBlocking() }
        let deadline = ContinuousClock.now + .seconds(10)
        var port = ""
        while port.isEmpty, ContinuousClock.now < deadline {
            port =
                (try? String(contentsOfFile: portFile, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            if port.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        }
        let copy = try await PackageExecutable.run(
            "/usr/bin/env",
            [
                "python3", work.file("copy.py"), "fetch", "-", "-", work.file("copy.out"), port,
            ], timeout: .seconds(300))
        let said = copy.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        guard copy.status == 0, let seconds = Double(said) else {
            throw BenchFailure("the TLS copy failed: \(copy.standardError)")
        }
        try? FileManager.default.removeItem(atPath: work.file("copy.out"))
        return seconds
    }

    private static let copier = #"""
        import os, socket, ssl, sys, time
        mode, cert, key, path, where = sys.argv[1:6]
        chunk = 256 * 1024
        if mode == "serve":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_3
            context.load_cert_chain(cert, key)
            listener = socket.create_server(("127.0.0.1", 0))
            with open(where + ".new", "w") as out:
                out.write(str(listener.getsockname()[1]))
            os.rename(where + ".new", where)
            connection, _ = listener.accept()
            with context.wrap_socket(connection, server_side=True) as tls, open(path, "rb") as source:
                while True:
                    data = source.read(chunk)
                    if not data:
                        break
                    tls.sendall(data)
                try:
                    tls.unwrap()
                except (ssl.SSLError, OSError):
                    pass  # the client closed as soon as it had every byte
        else:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.minimum_version = ssl.TLSVersion.TLSv1_3
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            start = time.monotonic()
            with socket.create_connection(("127.0.0.1", int(where))) as connection, \
                 context.wrap_socket(connection) as tls, open(path, "wb") as target:
                while True:
                    data = tls.recv(1 << 20)
                    if not data:
                        break
                    target.write(data)
            print(time.monotonic() - start)
        """#
}
