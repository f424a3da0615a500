#!/usr/bin/env python3
"""A KDE Connect device that behaves as the Android app does on a network that drops broadcasts, so that
it finds devices by mDNS alone. Written from the app's sources (KDE/kdeconnect-android at 55ddcb13,
2026-08-22; files under src/main/java/org/kde/kdeconnect/, named at each behaviour), sharing no code with
hexd. The app sends a broadcast too (LanLinkProvider.onStart → broadcastUdpIdentityPacket); this device
leaves it out, so that whatever it finds or is found by comes through mDNS and unicast. mDNS is always on in
this version and in releases from 1.35.1; 1.34.2 to 1.34.4 had it off unless the setting `mdns_enabled` was
set (commits 5cfb33f1, reverted by 5767c835).

It publishes and browses `_kdeconnect._udp` (python-zeroconf), sends each device it finds its identity by
unicast UDP, dials the devices whose identity it hears and takes the connections of those that heard its
own, with the app's TLS roles, protocol 8, pairing and the share and ping plugins. Its device ID, key,
certificate and paired devices are kept in WORKDIR (NAME.json, NAME.key, NAME.crt), as the app keeps them
across restarts.

Commands on standard input, one a line (all but `accept` and `quit` go to the device linked last):
  pair                  ask to pair, the request dated now
  accept                accept the pending pairing request
  send JSON             write a packet {"type": …, "body": {…}} on the link (`id` added)
  ping [MESSAGE]        send a ping, with a message when given
  share-text TEXT       share a text
  quit                  (or end of input) unpublish and stop
Lines written on standard output: `ready ID`, `found NAME ID ADDRESS` (a device found by mDNS),
`heard NAME ID ADDRESS` (a device's identity by UDP), `linked VERSION ID`, `closed ID`, `code CODE` (of
this device's request), `request CODE` (a device asks to pair), `paired`, `unpaired`, `clipboard TEXT`
(a shared text), `url URL` (a shared URL, opened), `notification MESSAGE` (a ping), `dropped TYPE` (a
packet from a device not paired), `packet JSON` (any other packet), `error TEXT`. TEXT and MESSAGE are
written with JSON's string escapes (a newline as \\n).

With --no-browse it publishes and listens but never browses: a device whose own discovery has not found
the other side (Android's NsdManager misses services now and then, and resolves one at a time), so that
only the other side's browse and its unicast identity can bring the two together.

Usage: kdeconnect_android.py WORKDIR NAME PORT [--no-browse]   (PORT: the first TCP port tried for links)
"""
import base64
import ctypes
import fcntl
import hashlib
import ipaddress
import json
import os
import re
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
import uuid

from zeroconf import InterfaceChoice, IPVersion, ServiceBrowser, ServiceInfo, ServiceListener, Zeroconf

# backends/lan/MdnsDiscovery.kt, SERVICE_TYPE.
SERVICE_TYPE = "_kdeconnect._udp.local."
# backends/lan/LanLinkProvider.java: UDP_PORT (and MIN_PORT, where sendUdpIdentityPacket sends), the TCP
# port range, MAX_IDENTITY_PACKET_SIZE, MILLIS_DELAY_BETWEEN_CONNECTIONS_TO_SAME_DEVICE.
UDP_PORT, MIN_PORT, MAX_PORT = 1716, 1716, 1764
MAX_IDENTITY_PACKET_SIZE = 512 * 1024
RATE_LIMIT_SECONDS = 1.0
# backends/lan/LanLink.java, MAX_PACKET_SIZE.
MAX_PACKET_SIZE = 32 * 1024 * 1024
# helpers/DeviceHelper.kt, PROTOCOL_VERSION; the device type of a phone (DeviceHelper.deviceType).
PROTOCOL_VERSION = 8
# helpers/security/SslHelper.kt, configureSslSocket: setSoTimeout(10000). Every other socket operation
# here has the same bound (the app's have none).
TIMEOUT = 10
# Each plugin's supportedPacketTypes and outgoingPacketTypes (plugins/share/SharePlugin.kt,
# plugins/ping/PingPlugin.kt); the identity's capabilities are their union (plugins/PluginFactory.kt). The
# app has many more plugins: only these two are modelled, and only theirs declared.
PLUGINS = {
    "share": ({"kdeconnect.share.request", "kdeconnect.share.request.update"}, {"kdeconnect.share.request"}),
    "ping": ({"kdeconnect.ping"}, {"kdeconnect.ping"}),
}
INCOMING = sorted(set().union(*(incoming for incoming, _ in PLUGINS.values())))
OUTGOING = sorted(set().union(*(outgoing for _, outgoing in PLUGINS.values())))
# helpers/NetworkHelper.kt, isPrivateAddress: loopback, site-local, link-local, CGNAT, unique local.
PRIVATE = [ipaddress.ip_network(net) for net in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                                                 "169.254.0.0/16", "100.64.0.0/10", "::1/128", "fe80::/10", "fc00::/7")]

work, name, first_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
browses = "--no-browse" not in sys.argv[4:]
output_lock = threading.Lock()
lock = threading.RLock()  # devices, visible, current and the stored state


def say(line):
    with output_lock:
        print(line, flush=True)


def shown(text):
    return json.dumps(str(text), ensure_ascii=False)[1:-1]


# The device ID (helpers/DeviceHelper.kt, initializeDeviceId: a UUID without its dashes) and the paired
# devices' certificates and protocol versions (DeviceInfo.saveInSettings), kept across runs.
state_path = os.path.join(work, name + ".json")
if os.path.exists(state_path):
    with open(state_path, encoding="utf-8") as file:
        state = json.load(file)
else:
    state = {"deviceId": uuid.uuid4().hex, "trusted": {}}
me = state["deviceId"]


def save_state():
    with lock, open(state_path, "w", encoding="utf-8") as file:
        json.dump(state, file)


# helpers/security/SslHelper.kt, initialiseCertificate, with the key of helpers/security/RsaHelper.kt,
# initialiseRsaKeys: EC secp256r1, CN = device ID, OU = KDE Connect, O = KDE, serial 1, SHA512withECDSA.
key_path, cert_path = os.path.join(work, name + ".key"), os.path.join(work, name + ".crt")
if not os.path.exists(cert_path):
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
         key_path, "-out", cert_path, "-days", "3650", "-set_serial", "1", "-sha512",
         "-subj", f"/CN={me}/OU=KDE Connect/O=KDE"],
        check=True, capture_output=True, timeout=TIMEOUT)


def public_key(certificate, der):
    """The SubjectPublicKeyInfo of a certificate (PEM file path, or DER bytes), as DER."""
    args = ["openssl", "x509", "-pubkey", "-noout"] + (["-inform", "DER"] if der else ["-in", certificate])
    pem = subprocess.run(args, input=certificate if der else None, check=True, capture_output=True,
                         timeout=TIMEOUT).stdout.decode()
    return base64.b64decode("".join(line for line in pem.splitlines() if "-----" not in line))


own_public_key = public_key(cert_path, der=False)


def identity():
    """DeviceInfo.toIdentityPacket of helpers/DeviceHelper.kt, getDeviceInfo."""
    return {"deviceId": me, "deviceName": name, "protocolVersion": PROTOCOL_VERSION, "deviceType": "phone",
            "incomingCapabilities": INCOMING, "outgoingCapabilities": OUTGOING}


def serialize(kind, body):
    """NetworkPacket.serialize: id (milliseconds), type, body, compact as org.json writes it, a newline."""
    packet = {"id": int(time.time() * 1000), "type": kind, "body": body}
    return (json.dumps(packet, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def opt_int(value, default):
    """org.json's optInt (NetworkPacket.getInt): a number or a numeric string, else the default."""
    try:
        return int(float(value)) if not isinstance(value, bool) else default
    except (TypeError, ValueError, OverflowError):
        return default


def opt_string(value):
    """org.json's optString (NetworkPacket.getString): "" when missing, else the value as text."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def filtered_name(text):
    """helpers/DeviceHelper.kt, filterInvalidCharactersFromDeviceNameAndLimitLength."""
    return re.sub(r"[\"',;:.!?()\[\]<>]", "", text).strip()[:32]


def valid_identity(packet):
    """DeviceInfo.isValidIdentityPacket: the type, a name left once filtered, an ID of 32–38 of
    [a-zA-Z0-9_-]."""
    body = packet.get("body") if isinstance(packet, dict) else None
    return (isinstance(body, dict) and packet.get("type") == "kdeconnect.identity"
            and bool(filtered_name(opt_string(body.get("deviceName"))))
            and re.fullmatch(r"[a-zA-Z0-9_-]{32,38}", opt_string(body.get("deviceId"))) is not None)


def private(address):
    ip = ipaddress.ip_address(address)
    return any(ip in net for net in PRIVATE if net.version == ip.version)


class RateLimit:
    """LanLinkProvider.rateLimitByIp and rateLimitByDeviceId: a second datagram or connection from the
    same key within a second is dropped. One table of addresses serves UDP and TCP alike."""

    def __init__(self):
        self.last = {}

    def limited(self, key):
        now = time.monotonic()
        with lock:
            if key in self.last and self.last[key] + RATE_LIMIT_SECONDS > now:
                return True
            self.last[key] = now
            return False


by_address, by_device = RateLimit(), RateLimit()


class LineTooLong(Exception):
    pass


def read_plain_line(raw):
    """helpers/BoundedLineReader.kt, readLineBounded, byte by byte as LanLinkProvider.tcpPacketReceived
    reads the plain identity: TLS starts right after it."""
    line = b""
    while not line.endswith(b"\n"):
        byte = raw.recv(1)
        if not byte:
            raise EOFError("closed")
        line += byte
        if len(line) >= MAX_IDENTITY_PACKET_SIZE:
            raise LineTooLong("line too long")
    return line.decode()


class Lines:
    """readLineBounded over the TLS stream; a line begun survives a read time-out."""

    def __init__(self, stream):
        self.stream, self.buffer = stream, b""

    def line(self, limit):
        while b"\n" not in self.buffer:
            if len(self.buffer) >= limit:
                self.buffer = b""
                raise LineTooLong("line too long")
            chunk = self.stream.recv(65536)
            if not chunk:
                raise EOFError("closed")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


_libssl = ctypes.CDLL(ssl._ssl.__file__)
_libssl.SSL_CTX_get_verify_mode.restype = ctypes.c_int
_libssl.SSL_CTX_get_verify_mode.argtypes = [ctypes.c_void_p]
_libssl.SSL_CTX_set_verify.restype = None
_libssl.SSL_CTX_set_verify.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
_ACCEPT_ANY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)(lambda ok, store: 1)
SSL_VERIFY_PEER = 1  # OpenSSL's, what Python sets for CERT_OPTIONAL


def request_any_certificate(context):
    """A TLS server that asks the client for a certificate and takes any (SslHelper.kt: wantClientAuth
    with trustAllCerts). Python's ssl has no verify callback, so OpenSSL's is set through the SSL_CTX
    pointer that follows the object header in CPython's SSLContext (checked against the mode first)."""
    context.verify_mode = ssl.CERT_OPTIONAL
    pointer = ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value
    if _libssl.SSL_CTX_get_verify_mode(pointer) != SSL_VERIFY_PEER:
        raise RuntimeError("cannot reach this Python's SSL_CTX")
    _libssl.SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, ctypes.cast(_ACCEPT_ANY, ctypes.c_void_p))


def tls(raw, client_mode, trusted):
    """helpers/security/SslHelper.kt, convertToSslSocket: TLS 1.2 (getSslContextForDevice, "TLSv1.2"),
    this device's certificate shown in either role; a paired device must show its stored certificate
    (needClientAuth as the server), any other's is taken (trustAllCerts; wantClientAuth as the server)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT if client_mode else ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path, key_path)
    if client_mode:
        context.check_hostname = False
    if trusted:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=base64.b64decode(trusted["certificate"]))
    elif client_mode:
        context.verify_mode = ssl.CERT_NONE
    else:
        request_any_certificate(context)
    return context.wrap_socket(raw, server_side=not client_mode)


def hold(raw):
    """Where LanLinkProvider.tcpPacketReceived returns early it neither answers nor closes the socket;
    held here for the time-out, then closed."""
    time.sleep(TIMEOUT)
    raw.close()


class Link:
    def __init__(self, stream, lines, certificate):
        self.stream, self.lines, self.certificate = stream, lines, certificate
        self.write_lock = threading.Lock()

    def write(self, kind, body):
        with self.write_lock:
            self.stream.sendall(serialize(kind, body))


class Device:
    """What Device.kt keeps of a device, its pairing state (PairingHandler.kt) and its plugins."""

    def __init__(self, device_id):
        self.id = device_id
        self.state = "Paired" if device_id in state["trusted"] else "NotPaired"
        self.link = None
        self.timer = None
        self.timestamp = 0
        self.name, self.version, self.certificate, self.incoming, self.outgoing = "", 0, b"", None, None

    def update(self, body, certificate, link):
        self.name = filtered_name(opt_string(body.get("deviceName")))
        self.version = opt_int(body.get("protocolVersion"), -1)
        self.certificate, self.link = certificate, link
        self.incoming, self.outgoing = (set(body[key]) if isinstance(body.get(key), list) else None
                                        for key in ("incomingCapabilities", "outgoingCapabilities"))

    def plugin_for(self, kind):
        """The plugin a paired device's packet goes to: loaded only when the capabilities meet
        (PluginFactory.pluginsForCapabilities; all of them until capabilities are known)."""
        for plugin, (supported, sent) in PLUGINS.items():
            meets = self.outgoing is None or self.outgoing & supported or (self.incoming or set()) & sent
            if kind in supported and meets:
                return plugin
        return None

    def send(self, kind, body):
        """Device.sendPacketBlocking: only packet types the device takes (supportsPacketType)."""
        if kind not in ("kdeconnect.identity", "kdeconnect.pair") and self.incoming is not None \
                and kind not in self.incoming:
            raise ValueError(f"{self.name} does not take {kind}")
        link = self.link
        if link is None:
            raise ValueError(f"{self.name} is not reachable")
        link.write(kind, body)

    def received(self, packet):
        """Device.onPacketReceived."""
        kind = packet.get("type")
        body = packet.get("body") if isinstance(packet.get("body"), dict) else {}
        if kind == "kdeconnect.pair":
            self.pair_packet(body)
            return
        if self.state != "Paired":
            # Not paired: Device.onPacketReceived calls unpair() (pair: false on the link), and no plugin
            # is loaded for a device not paired (reloadPluginsFromSettings), so the packet goes nowhere.
            with lock:
                was, self.state = self.state, "NotPaired"
                self.cancel_timer()
            self.send("kdeconnect.pair", {"pair": False})
            say(f"dropped {kind}")
            if was != "NotPaired":
                say("unpaired")
            return
        plugin = self.plugin_for(kind)
        if plugin == "share" and kind == "kdeconnect.share.request" and "filename" not in body:
            # SharePlugin.onPacketReceived: a file first, then a text (receiveText: to the clipboard,
            # replacing it, and a toast), then a URL (receiveUrl: opened).
            if "text" in body:
                say("clipboard " + shown(opt_string(body["text"])))
                return
            if "url" in body:
                say("url " + shown(opt_string(body["url"])))
                return
        if plugin == "ping":
            # PingPlugin.onPacketReceived: a notification of the message, or of "Ping!" without one.
            say("notification " + shown(opt_string(body["message"]) if "message" in body else "Ping!"))
            return
        say("packet " + json.dumps(packet, sort_keys=True, ensure_ascii=False))

    # PairingHandler.kt

    def cancel_timer(self):
        if self.timer:
            self.timer.cancel()
            self.timer = None

    def start_timer(self, seconds):
        timer = threading.Timer(seconds, self.timed_out)
        timer.daemon = True
        self.timer = timer
        timer.start()

    def timed_out(self):
        with lock:
            self.timer, self.state = None, "NotPaired"
        say("error pairing timed out")

    def code(self):
        """PairingHandler.getVerificationKey: SHA-256 of both public keys, the larger first, then (from
        protocol 8) the request's date in decimal; its first 8 hex digits in upper case."""
        ours, theirs = own_public_key, public_key(self.certificate, der=True)
        first, second = (theirs, ours) if ours < theirs else (ours, theirs)
        dated = str(self.timestamp).encode() if self.version >= 8 else b""
        return hashlib.sha256(first + second + dated).hexdigest()[:8].upper()

    def pair_packet(self, body):
        """PairingHandler.packetReceived."""
        with lock:
            self.cancel_timer()
            state_was = self.state
        wants = body.get("pair") is True or opt_string(body.get("pair")).lower() == "true"
        if not wants:
            if state_was != "NotPaired":
                self.unpaired()
            return
        if state_was == "Requested":
            self.pairing_done()
            return
        if state_was == "RequestedByPeer":
            return  # "Ignoring second pairing request before the first one timed out"
        if state_was == "Paired":
            self.unpaired()  # "Received pairing request from a device we already trusted": unpaired first
        if self.version >= 8:
            timestamp = opt_int(body.get("timestamp"), -1)
            if timestamp == -1:
                self.unpaired()
                return
            if abs(timestamp - int(time.time())) > 1800:  # allowedTimestampDifferenceSeconds
                say("error device clocks are out of sync")
                return
            self.timestamp = timestamp
        with lock:
            self.state = "RequestedByPeer"
            self.start_timer(25)  # the person has 25 s (the other side gives up at 30)
        say(f"request {self.code()}")

    def request_pairing(self):
        """PairingHandler.requestPairing: pair: true with the date (in seconds), 30 s to be answered."""
        if self.state == "Paired":
            raise ValueError("already paired")
        if self.state == "RequestedByPeer":
            self.accept_pairing()
            return
        with lock:
            self.cancel_timer()
            self.state = "Requested"
            self.timestamp = int(time.time())
            self.start_timer(30)
        self.send("kdeconnect.pair", {"pair": True, "timestamp": self.timestamp})
        say(f"code {self.code()}")

    def accept_pairing(self):
        """PairingHandler.acceptPairing: pair: true, undated; paired once written."""
        with lock:
            self.cancel_timer()
        self.send("kdeconnect.pair", {"pair": True})
        self.pairing_done()

    def pairing_done(self):
        """pairingDone, and Device.kt's pairingSuccessful: the certificate and version are stored."""
        with lock:
            self.state = "Paired"
            state["trusted"][self.id] = {"certificate": base64.b64encode(self.certificate).decode(),
                                         "protocolVersion": self.version}
            save_state()
        say("paired")

    def unpaired(self):
        """Device.kt's unpaired callback: no longer trusted."""
        with lock:
            self.state = "NotPaired"
            state["trusted"].pop(self.id, None)
            save_state()
        say("unpaired")


devices = {}  # Device.kt objects by device ID
visible = {}  # LanLinkProvider.visibleDevices: the link of each device linked
current = None  # the device linked last: commands go to it


def unserialize_identity(text):
    """LanLinkProvider.unserializeReceivedIdentityPacket: valid, not this device's own, not a second
    one from the device within a second (every network is trusted, TrustedNetworkHelper's default)."""
    try:
        packet = json.loads(text)
    except ValueError:
        return None
    if not valid_identity(packet) or packet["body"]["deviceId"] == me:
        return None
    if by_device.limited(packet["body"]["deviceId"]):
        return None
    return packet


def handshake(plain, raw, client_mode):
    """LanLinkProvider.identityPacketReceived: TLS as the client if the device dialed (roles inverted),
    then from protocol 8 both identities again inside TLS, which must name the same device and version."""
    global current
    body = plain["body"]
    device_id, version = body["deviceId"], opt_int(body.get("protocolVersion"), -1)
    with lock:
        trusted = state["trusted"].get(device_id)
    if trusted and trusted["protocolVersion"] > version:  # isProtocolDowngrade
        raise ValueError(f"{device_id} downgraded to protocol {version}")
    stream = tls(raw, client_mode, trusted)
    lines = Lines(stream)
    secure = plain
    if version >= 8:
        stream.sendall(serialize("kdeconnect.identity", identity()))
        secure = json.loads(lines.line(MAX_IDENTITY_PACKET_SIZE))
        if not valid_identity(secure) or opt_int(secure["body"].get("protocolVersion"), -1) != version \
                or secure["body"]["deviceId"] != device_id:
            raise ValueError("the identity inside TLS is not the one outside")
    certificate = stream.getpeercert(binary_form=True)
    if not certificate:
        raise ValueError("no certificate")  # DeviceInfo.fromIdentityPacketAndCert needs one
    # addOrUpdateLink: a device linked already must show the same certificate; its old socket is closed
    # (LanLink.reset).
    with lock:
        old = visible.get(device_id)
        if old and old.certificate != certificate:
            raise ValueError("a link with another certificate")
        link = visible[device_id] = Link(stream, lines, certificate)
        device = devices.setdefault(device_id, Device(device_id))
        device.update(secure["body"], certificate, link)
        current = device_id
    if old:
        old.stream.close()
    say(f"linked {version} {device_id}")
    threading.Thread(target=read_link, args=(device, link), daemon=True).start()


def read_link(device, link):
    """LanLink.reset's reading thread: read time-outs and over-long lines are skipped; when the socket
    ends, 300 ms later the device is gone unless another link replaced it (onConnectionLost)."""
    link.stream.settimeout(TIMEOUT)
    try:
        while True:
            try:
                line = link.lines.line(MAX_PACKET_SIZE)
            except (TimeoutError, LineTooLong):
                continue
            if line.strip():
                device.received(json.loads(line))
    except Exception:  # noqa: BLE001 - the app ends the link on any failure, as here
        link.stream.close()
        time.sleep(0.3)
        with lock:
            gone = visible.get(device.id) is link
            if gone:
                del visible[device.id]
                device.link = None
        if gone:
            say(f"closed {device.id}")


def udp_packet_received(data, address):
    """LanLinkProvider.udpPacketReceived: dial the identity's tcpPort, write this device's identity in
    plain text naming the target, then be the TLS server."""
    if not private(address) or by_address.limited(address):
        return
    packet = unserialize_identity(data.decode(errors="replace"))
    if packet is None:
        return
    body = packet["body"]
    say(f"heard {filtered_name(opt_string(body['deviceName']))} {body['deviceId']} {address}")
    port = opt_int(body.get("tcpPort"), MIN_PORT)
    if not MIN_PORT <= port <= MAX_PORT:
        return
    raw = socket.create_connection((address, port), timeout=TIMEOUT)
    try:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)  # configureSocket
        mine = identity()
        mine["targetDeviceId"] = body["deviceId"]
        # getString on a number: the target's version goes as a string ("8").
        mine["targetProtocolVersion"] = opt_string(body.get("protocolVersion"))
        raw.sendall(serialize("kdeconnect.identity", mine))
        handshake(packet, raw, client_mode=False)
    except Exception:
        raw.close()
        raise


def tcp_packet_received(raw, address):
    """LanLinkProvider.tcpPacketReceived: the dialer's identity in plain text, its target fields checked,
    then TLS as the client."""
    if not private(address) or by_address.limited(address):
        hold(raw)
        return
    try:
        packet = unserialize_identity(read_plain_line(raw))
    except (OSError, EOFError, LineTooLong, UnicodeDecodeError):
        raw.close()
        return
    if packet is None:
        hold(raw)
        return
    target, version = packet["body"].get("targetDeviceId"), packet["body"].get("targetProtocolVersion")
    if (target is not None and target != me) or (version is not None and opt_int(version, -1) != PROTOCOL_VERSION):
        hold(raw)
        return
    try:
        handshake(packet, raw, client_mode=True)
    except Exception:
        raw.close()
        raise


def reporting(work_function, *args):
    """Runs a handshake in a thread of its own, as the app does; a failure is reported."""
    def run():
        try:
            work_function(*args)
        except Exception as error:  # noqa: BLE001 - a test peer reports every failure and goes on
            say(f"error {error}")
    threading.Thread(target=run, daemon=True).start()


def udp_listener(udp):
    """LanLinkProvider.setupUdpListener: UDP 1716, each datagram handled in a thread."""
    while True:
        try:
            data, (address, _) = udp.recvfrom(65536)
        except TimeoutError:
            continue
        reporting(udp_packet_received, data, address)


def tcp_listener(server):
    """LanLinkProvider.setupTcpListener: each connection handled in a thread."""
    while True:
        try:
            raw, (address, _) = server.accept()
        except TimeoutError:
            continue
        raw.settimeout(TIMEOUT)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        reporting(tcp_packet_received, raw, address)


def open_server_socket():
    """LanLinkProvider.openServerSocketOnFreePort: the first free port from the first one tried."""
    for port in range(first_port, MAX_PORT + 1):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            server.bind(("0.0.0.0", port))
        except OSError:
            server.close()
            continue
        server.listen(16)
        server.settimeout(1)
        return server
    raise OSError("no TCP port free")


def send_udp_identity(address, tcp_port):
    """LanLinkProvider.sendUdpIdentityPacket: the identity with tcpPort, to port 1716 (MIN_PORT) of the
    address given."""
    packet = identity()
    packet["tcpPort"] = tcp_port
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.settimeout(TIMEOUT)
        udp.sendto(serialize("kdeconnect.identity", packet), (address, MIN_PORT))


class Browser(ServiceListener):
    """MdnsDiscovery.createDiscoveryListener: a service found that is not this device and whose device
    (the service name) is not linked is resolved, one at a time (NsdResolveQueue: zeroconf's browser
    calls one handler at a time), and sent this device's identity at the address it resolved to."""

    def __init__(self, tcp_port):
        self.tcp_port = tcp_port

    def add_service(self, zc, type_, service):
        device_id = service[:-len(type_) - 1]
        with lock:
            if device_id == me or device_id in visible:
                return
        info = zc.get_service_info(type_, service, timeout=3000)
        addresses = info.parsed_addresses(IPVersion.V4Only) if info else []
        if not addresses:
            say(f"error could not resolve {service}")
            return
        txt_name = info.properties.get(b"name") or b"-"
        say(f"found {txt_name.decode(errors='replace')} {device_id} {addresses[0]}")
        send_udp_identity(addresses[0], self.tcp_port)

    def update_service(self, zc, type_, service):
        """NsdManager reports no updates."""

    def remove_service(self, zc, type_, service):
        """onServiceLost only logs: a device that is gone is noticed by its link."""


def ipv4_addresses():
    """This host's IPv4 addresses but loopback's, which NsdManager publishes with the service."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, interface in socket.if_nameindex():
            try:
                request = struct.pack("256s", interface.encode()[:15])
                address = socket.inet_ntoa(fcntl.ioctl(probe.fileno(), 0x8915, request)[20:24])  # SIOCGIFADDR
            except OSError:
                continue
            if not address.startswith("127."):
                found.append(address)
    return found


def linked_device():
    with lock:
        if current is None or current not in visible:
            raise ValueError("no device linked")
        return devices[current]


def requesting_device():
    with lock:
        for device in devices.values():
            if device.state == "RequestedByPeer":
                return device
    raise ValueError("no pairing request")


def main():
    # LanLinkProvider.onStart: the UDP and TCP listeners, then mDNS discovery and announcing.
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    udp.bind(("0.0.0.0", UDP_PORT))
    udp.settimeout(1)
    server = open_server_socket()
    tcp_port = server.getsockname()[1]
    threading.Thread(target=udp_listener, args=(udp,), daemon=True).start()
    threading.Thread(target=tcp_listener, args=(server,), daemon=True).start()
    zc = Zeroconf(interfaces=InterfaceChoice.All, ip_version=IPVersion.V4Only)
    if browses:
        ServiceBrowser(zc, SERVICE_TYPE, Browser(tcp_port))
    # MdnsDiscovery.createNsdServiceInfo: the service named by the device ID, on the TCP port, with TXT
    # id, name, type and protocol. NsdManager names the host (Android_ and a random hex ID).
    service = ServiceInfo(
        SERVICE_TYPE, f"{me}.{SERVICE_TYPE}", port=tcp_port, server=f"Android_{uuid.uuid4().hex}.local.",
        properties={"id": me, "name": name, "type": "phone", "protocol": str(PROTOCOL_VERSION)},
        parsed_addresses=ipv4_addresses())
    zc.register_service(service)
    say(f"ready {me}")
    try:
        for command in sys.stdin:
            verb, _, rest = command.strip().partition(" ")
            if verb == "quit":
                break
            try:
                if verb == "accept":
                    requesting_device().accept_pairing()
                elif verb == "pair":
                    linked_device().request_pairing()
                elif verb == "send":
                    message = json.loads(rest)
                    linked_device().send(message["type"], message.get("body", {}))
                elif verb == "ping":
                    # The app's "Send ping" is bare (PingPlugin.getUiMenuEntries); a message is what the
                    # desktop's --ping-msg adds, and the plugin shows it.
                    linked_device().send("kdeconnect.ping", {"message": rest} if rest else {})
                elif verb == "share-text":
                    linked_device().send("kdeconnect.share.request", {"text": rest})  # SharePlugin.sendText
                elif verb:
                    say(f"error unknown command {verb}")
            except Exception as error:  # noqa: BLE001
                say(f"error {error}")
    finally:
        # LanLinkProvider.onStop: MdnsDiscovery.stopAnnouncing (a goodbye) and stopDiscovering.
        zc.unregister_service(service)
        zc.close()


main()
