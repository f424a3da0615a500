#!/usr/bin/env python3
"""A stand-in for BlueZ's advertising API on a private bus, written from BlueZ's own source
(bluez/bluez at 690c16d: src/advertising.c, gdbus/client.c, lib/bluetooth/uuid.c, src/shared/ad.c),
with jeepney, a D-Bus library we did not write. It owns org.bluez and records, one JSON object a line
in LOG, what a client registered and how it went, behaving as BlueZ does:

- `/` answers ObjectManager.GetManagedObjects with one adapter, /org/bluez/hci0, carrying
  org.bluez.Adapter1 (Powered as --powered says) and org.bluez.LEAdvertisingManager1.
- RegisterAdvertisement(o, a{sv}): anything else is org.bluez.Error.InvalidArguments; a path the same
  client registered already is org.bluez.Error.AlreadyExists (advertising.c `register_advertisement`).
  BlueZ does not answer at once: it reads the client's object first, with ObjectManager.GetManagedObjects
  on the object's own path (`client_create` makes a GDBusClient whose root is that path;
  client.c `get_managed_objects`), and when that is an error or lacks the interface, with
  Properties.GetAll of org.bluez.LEAdvertisement1 (`get_managed_objects_reply` -> `refresh_properties`).
- It parses the properties as `parse_advertisement` does: Type "broadcast" or "peripheral"
  (`parse_type`), ServiceData an a{sv} of UUID strings to byte arrays (`parse_service_data`; a base
  UUID shortens to 16 bits, uuid.c `bt_string_to_uuid`), and the data fits the 31 bytes of a legacy
  advertisement (ad.c: 2 + UUID bytes + data per service data, 3 more for a peripheral's flags).
  A failure is org.bluez.Error.Failed "Failed to parse advertisement.". An adapter that is off
  still takes a registration (the kernel keeps the advertisement for when it is on): hexd is the one
  to leave such an adapter alone, by its Powered property.
- UnregisterAdvertisement(o): org.bluez.Error.DoesNotExist unless that client registered it
  (`unregister_advertisement`), and no Release call.
- A client that leaves the bus loses its advertisements (the GDBusClient's service watch).
- SIGUSR1 plays the adapter going away: each advertisement is released with
  LEAdvertisement1.Release (`client_release`, sent with no reply expected: gdbus's
  `g_dbus_proxy_method_call` without a callback goes through `g_dbus_send_message`, which
  sets no-reply on a method call: gdbus/object.c) and forgotten.

Usage: bluez_standin.py BUS_ADDRESS LOG [--powered on|off]   (runs until killed)
"""
import json
import signal
import sys

from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_error, new_method_call
from jeepney.low_level import MessageFlag
from jeepney import new_method_return
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

ADAPTER = "/org/bluez/hci0"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"
MANAGER = "org.bluez.LEAdvertisingManager1"
BASE_UUID_TAIL = "-0000-1000-8000-00805f9b34fb"
LEGACY_ADVERTISING_BYTES = 31

bus_address, log_path = sys.argv[1], sys.argv[2]
powered = "--powered" not in sys.argv or sys.argv[sys.argv.index("--powered") + 1] == "on"
log = open(log_path, "a", buffering=1)


def record(event, **fields):
    log.write(json.dumps({"event": event, **fields}) + "\n")


connection = open_dbus_connection(bus=bus_address)
assert connection.send_and_get_reply(message_bus.RequestName("org.bluez")).body[0] == 1, "could not own org.bluez"
connection.send_and_get_reply(message_bus.AddMatch(MatchRule(type="signal", member="NameOwnerChanged")))

registered = {}  # (client, path) -> what was registered
pending = {}  # serial of a call of ours -> what to do with its reply
adapter_gone = False


def on_usr1(_signum, _frame):
    global adapter_gone
    adapter_gone = True


signal.signal(signal.SIGUSR1, on_usr1)


def call(destination, path, interface, member, signature=None, body=(), then=None):
    """A call to a client; with no `then`, one that expects no reply."""
    message = new_method_call(DBusAddress(path, bus_name=destination, interface=interface), member, signature, body)
    serial = next(connection.outgoing_serial)
    if then:
        pending[serial] = then
    else:
        message.header.flags |= MessageFlag.no_reply_expected
    connection.send(message, serial=serial)


def uuid_bytes(text):
    """How many bytes BlueZ puts a UUID string in: 2 for Bluetooth's base UUID (or a 16-bit one)."""
    text = text.lower()
    if len(text) == 36 and text.startswith("0000") and text.endswith(BASE_UUID_TAIL):
        return 2
    if len(text) == 36:
        return 16
    if len(text) in (4, 6):
        return 2
    if len(text) in (8, 10):
        return 4
    return None


def parse(properties):
    """The advertisement BlueZ makes of the properties, or why it refuses them."""
    kind = properties.get("Type")
    if kind is None or kind[0] != "s" or kind[1] not in ("broadcast", "peripheral"):
        return None, f"Type {kind!r}"
    length = 3 if kind[1] == "peripheral" else 0
    service_data = {}
    signature, entries = properties.get("ServiceData", ("a{sv}", {}))
    if signature != "a{sv}":
        return None, f"ServiceData of type {signature}"
    for uuid, (value_signature, value) in entries.items():
        size = uuid_bytes(uuid)
        if size is None or value_signature != "ay":
            return None, f"ServiceData {uuid!r} of type {value_signature}"
        service_data[uuid] = bytes(value).hex()
        length += 2 + size + len(value)
    if "ServiceUUIDs" in properties:
        length += 2 + sum(uuid_bytes(uuid) or 16 for uuid in properties["ServiceUUIDs"][1])
    if length > LEGACY_ADVERTISING_BYTES:
        return None, f"{length} bytes of advertising data"
    return {"type": kind[1], "service_data": service_data, "length": length,
            "properties": sorted(properties)}, None


def refuse(request):
    connection.send(new_error(request, "org.bluez.Error.Failed", "s", ("Failed to parse advertisement.",)))


def finish_registration(request, client, path, properties, via):
    advertisement, why = parse(properties)
    if advertisement is None:
        record("refused", client=client, path=path, why=why)
        return refuse(request)
    registered[(client, path)] = advertisement
    record("registered", client=client, path=path, via=via, **advertisement)
    connection.send(new_method_return(request))


def register(request):
    client = request.header.fields.get(HeaderFields.sender)
    if request.header.fields.get(HeaderFields.signature) != "oa{sv}":
        return connection.send(new_error(request, "org.bluez.Error.InvalidArguments", "s", ("Invalid arguments",)))
    path = request.body[0]
    if (client, path) in registered:
        return connection.send(new_error(request, "org.bluez.Error.AlreadyExists", "s", ("Already Exists",)))

    def by_get_all(reply):
        if reply.header.message_type == MessageType.error:
            record("refused", client=client, path=path, why="GetAll failed")
            return refuse(request)
        finish_registration(request, client, path, reply.body[0], "GetAll")

    def by_managed_objects(reply):
        if reply.header.message_type == MessageType.error:
            return call(client, path, "org.freedesktop.DBus.Properties", "GetAll", "s", (ADVERTISEMENT,), by_get_all)
        interfaces = reply.body[0].get(path, {})
        if ADVERTISEMENT not in interfaces:
            return call(client, path, "org.freedesktop.DBus.Properties", "GetAll", "s", (ADVERTISEMENT,), by_get_all)
        finish_registration(request, client, path, interfaces[ADVERTISEMENT], "GetManagedObjects")

    call(client, path, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", then=by_managed_objects)


def unregister(request):
    client = request.header.fields.get(HeaderFields.sender)
    path = request.body[0] if request.body else None
    if registered.pop((client, path), None) is None:
        return connection.send(new_error(request, "org.bluez.Error.DoesNotExist", "s", ("Does Not Exist",)))
    record("unregistered", client=client, path=path)
    connection.send(new_method_return(request))


def managed_objects(request):
    adapter = {
        "org.bluez.Adapter1": {"Address": ("s", "00:11:22:33:44:55"), "Powered": ("b", powered)},
        MANAGER: {"ActiveInstances": ("y", len(registered)), "SupportedInstances": ("y", 5)},
    }
    connection.send(new_method_return(request, "a{oa{sa{sv}}}", ({ADAPTER: adapter},)))


record("ready", powered=powered)
while True:
    if adapter_gone:
        adapter_gone = False
        for client, path in list(registered):
            call(client, path, ADVERTISEMENT, "Release")
            registered.pop((client, path))
            record("released", client=client, path=path)
    try:
        message = connection.receive(timeout=0.1)
    except TimeoutError:
        continue
    fields = message.header.fields
    kind = message.header.message_type
    if kind in (MessageType.method_return, MessageType.error):
        then = pending.pop(fields.get(HeaderFields.reply_serial), None)
        if then:
            then(message)
    elif kind == MessageType.signal and fields.get(HeaderFields.member) == "NameOwnerChanged":
        name, _old, new = message.body
        for client, path in [key for key in registered if key[0] == name and not new]:
            registered.pop((client, path))
            record("dropped", client=client, path=path, why="the client left the bus")
    elif kind == MessageType.method_call:
        member = fields.get(HeaderFields.member)
        interface = fields.get(HeaderFields.interface)
        if (interface, member) == (MANAGER, "RegisterAdvertisement") and fields.get(HeaderFields.path) == ADAPTER:
            register(message)
        elif (interface, member) == (MANAGER, "UnregisterAdvertisement") and fields.get(HeaderFields.path) == ADAPTER:
            unregister(message)
        elif (interface, member) == ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"):
            managed_objects(message)
        else:
            connection.send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"{member}?",)))
