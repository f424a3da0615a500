#!/usr/bin/env python3
"""Asks for a DNS-SD service from one source address, as a legacy unicast query (RFC 6762, 6.7:
from a port other than 5353, so the answer comes back to it by unicast), TRIES times, and prints
how many were answered with an instance of the service and the median time to the answer.

Written with the standard library alone, so that the source address is exactly the one given
(python-zeroconf picks its own). Used by mdns-onlink.sh.

Usage: mdns-query.py SOURCE INTERFACE SERVICE [TRIES [SPACING_MS]]
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


def main():
    source, interface, service = sys.argv[1:4]
    tries = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    spacing = int(sys.argv[5]) / 1000 if len(sys.argv) > 5 else 0.06
    family = socket.AF_INET6 if ":" in source else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    index = socket.if_nametoindex(interface)
    if family == socket.AF_INET6:
        # A link-local source is bound on its interface; any other needs no zone.
        sock.bind((source, 0, 0, index if source.lower().startswith("fe80") else 0))
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
        destination = ("ff02::fb", 5353, 0, index)
    else:
        sock.bind((source, 0))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(source))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
        destination = ("224.0.0.251", 5353)
    times = []
    for attempt in range(tries):
        ident = (attempt * 7919 + 1) & 0xFFFF
        start = time.monotonic()
        sock.sendto(query(ident, service), destination)
        deadline = start + 1.0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            try:
                message, _ = sock.recvfrom(9000)
            except socket.timeout:
                break
            if answers_with_instance(message, ident, service):
                times.append((time.monotonic() - start) * 1000)
                break
        time.sleep(spacing)
    median = f"{statistics.median(times):.1f}" if times else "-"
    print(f"{len(times)} of {tries} answered, median {median} ms")


main()
