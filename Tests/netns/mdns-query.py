#!/usr/bin/env python3
"""Asks for a DNS-SD service from one source address, as a legacy unicast query (RFC 6762, 6.7:
from a port other than 5353, so the answer comes back to it by unicast), TRIES times, and prints
how many were answered with an instance of the service and the median time to the answer.

With --standard, it asks as an mDNS querier does instead: from port 5353, the answer multicast to
the group, where a socket of its own listens (a source no route leads back to is answered so).
With --hops, the query leaves with that TTL or hop limit (255 by default, as mDNS sends; a routed
host's query arrives with less).

Written with the standard library alone, so that the source address is exactly the one given
(python-zeroconf picks its own). Used by mdns-onlink.sh.

Usage: mdns-query.py SOURCE INTERFACE SERVICE [TRIES [SPACING_MS]] [--standard] [--hops N]
  SOURCE     the address the query comes from (IPv4 or IPv6; an IPv6 one without zone)
  INTERFACE  the interface the query goes out on (to 224.0.0.251 or ff02::fb there)
  SERVICE    such as _hexd._tcp.local
"""
import socket
import statistics
import struct
import sys
import time


def name(text):
    return b"".join(bytes([len(label)]) + label.encode() for label in text.strip(".").split(".")) + b"\0"


def query(ident, service):
    # One question, PTR (12), class IN (1); no flags: a standard query.
    return struct.pack("!HHHHHH", ident, 0, 1, 0, 0, 0) + name(service) + struct.pack("!HH", 12, 1)


def answers_with_instance(message, ident, service):
    """Whether `message` is a response to query `ident` whose answers hold a PTR for `service`."""
    if len(message) < 12:
        return False
    got, flags, _, count = struct.unpack("!HHHH", message[:8])
    # The service's name, uncompressed, appears in the echoed question and, by pointer or in full,
    # in a PTR answer: enough to see an answer to our question came, with at least one record.
    return got == ident and flags & 0x8000 and count > 0 and name(service) in message


def shared(family):
    """A UDP socket that may share port 5353 with the host's other mDNS sockets."""
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return sock


def main():
    arguments = sys.argv[1:]
    standard = "--standard" in arguments
    hops = 255
    if "--hops" in arguments:
        at = arguments.index("--hops")
        hops = int(arguments[at + 1])
        del arguments[at:at + 2]
    arguments = [argument for argument in arguments if argument != "--standard"]
    source, interface, service = arguments[0:3]
    tries = int(arguments[3]) if len(arguments) > 3 else 1
    spacing = int(arguments[4]) / 1000 if len(arguments) > 4 else 0.06
    family = socket.AF_INET6 if ":" in source else socket.AF_INET
    sock = shared(family) if standard else socket.socket(family, socket.SOCK_DGRAM)
    port = 5353 if standard else 0
    index = socket.if_nametoindex(interface)
    if family == socket.AF_INET6:
        # A link-local source is bound on its interface; any other needs no zone.
        sock.bind((source, port, 0, index if source.lower().startswith("fe80") else 0))
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, hops)
        destination = ("ff02::fb", 5353, 0, index)
    else:
        sock.bind((source, port))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(source))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, hops)
        destination = ("224.0.0.251", 5353)
    listener = sock
    if standard:
        # The answer is multicast to the group: heard on a socket bound to the port alone.
        listener = shared(family)
        if family == socket.AF_INET6:
            listener.bind(("::", 5353))
            membership = socket.inet_pton(socket.AF_INET6, "ff02::fb") + struct.pack("@I", index)
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, membership)
        else:
            listener.bind(("", 5353))
            membership = socket.inet_aton("224.0.0.251") + socket.inet_aton(source)
            listener.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
    times = []
    for attempt in range(tries):
        # A multicast response carries id 0 (RFC 6762, 18.1), so a standard query has that id.
        ident = 0 if standard else (attempt * 7919 + 1) & 0xFFFF
        start = time.monotonic()
        sock.sendto(query(ident, service), destination)
        deadline = start + 1.0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            listener.settimeout(left)
            try:
                message, _ = listener.recvfrom(9000)
            except socket.timeout:
                break
            if answers_with_instance(message, ident, service):
                times.append((time.monotonic() - start) * 1000)
                break
        time.sleep(spacing)
    median = f"{statistics.median(times):.1f}" if times else "-"
    print(f"{len(times)} of {tries} answered, median {median} ms")


main()
