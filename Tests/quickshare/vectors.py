#!/usr/bin/env python3
"""Deterministic test vectors for the Quick Share (Nearby Share) UKEY2 handshake, PIN and secure channel.

Run with the system python3 (needs only `cryptography`) from the repository root:
  python3 Tests/quickshare/vectors.py > Tests/quickshare/vectors.txt
The Swift unit tests embed the printed values and cite this script.

Protobuf messages are encoded by hand below (no pyquickshare, no protobuf runtime), so the vectors do not
depend on any Quick Share implementation. Fields are written in field-number order, as every protobuf
serializer does for these proto2 messages, so the bytes match what the real peers put on the wire.

Sources (paths inside the repositories; line numbers from the snapshots used to write this script):
  ukey2   = github.com/google/ukey2 @ 10fc737aa901e873a3367e7e26b88eb01cd55d69, the reference implementation
  neardrop = github.com/grishka/NearDrop @ 01e423147e7a010b44a2df7f658047f37af041b5
  pyquickshare 0.1.0.post1 (PyPI): pyquickshare/ukey2.py, common.py, receive.py
  rquickshare = github.com/Martichou/rquickshare core_lib/src/utils.rs
  nearby  = github.com/google/nearby sharing/share_session.cc (Google's own Quick Share client)
NearDrop's NearbyShare/ProtobufSource/{securemessage,securegcm,device_to_device_messages,ukey}.proto are
byte-identical to ukey2's src/main/proto/*.proto, so the proto line numbers below hold for both.
Where the implementations disagree, this script follows the ukey2 reference and says so.
"""

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# --- protobuf field numbers and enum values -----------------------------------------------------------------
# ukey.proto:32-33   Ukey2Message { optional Type message_type = 1; optional bytes message_data = 2; }
# ukey.proto:27-29   Ukey2Message.Type CLIENT_INIT = 2; SERVER_INIT = 3; CLIENT_FINISH = 4;
# ukey.proto:69      Ukey2HandshakeCipher P256_SHA512 = 100;
# ukey.proto:76-89   Ukey2ClientInit { version = 1; random = 2; repeated CipherCommitment cipher_commitments = 3;
#                                      string next_protocol = 4; }
# ukey.proto:83-84   CipherCommitment { Ukey2HandshakeCipher handshake_cipher = 1; bytes commitment = 2; }
# ukey.proto:93-99   Ukey2ServerInit { version = 1; random = 2; handshake_cipher = 3; bytes public_key = 4; }
# ukey.proto:103     Ukey2ClientFinished { bytes public_key = 1; }
UKEY2_CLIENT_INIT, UKEY2_SERVER_INIT, UKEY2_CLIENT_FINISH = 2, 3, 4
P256_SHA512 = 100
# securemessage.proto:121-122  GenericPublicKey { required PublicKeyType type = 1;
#                                                 optional EcP256PublicKey ec_p256_public_key = 2; }
# securemessage.proto:91       PublicKeyType EC_P256 = 1;
# securemessage.proto:101-102  EcP256PublicKey { required bytes x = 1; required bytes y = 2; }
EC_P256 = 1
# securemessage.proto:28,30    SecureMessage { required bytes header_and_body = 1; required bytes signature = 2; }
# securemessage.proto:66,68    HeaderAndBody { required Header header = 1; required bytes body = 2; }
# securemessage.proto:49-61    Header { signature_scheme = 1; encryption_scheme = 2; verification_key_id = 3;
#                                       decryption_key_id = 4; iv = 5; public_metadata = 6;
#                                       associated_data_length = 7; }
#   NB: iv is field 5 and public_metadata field 6 (not 6 and 7). secure_message_builder.cc:181-215 sets only
#   1, 2, 5 and 6 here: no key ids and no associated data are used by D2DCryptoOps.
# securemessage.proto:35       SigScheme HMAC_SHA256 = 1;
# securemessage.proto:45       EncScheme AES_256_CBC = 2;
HMAC_SHA256, AES_256_CBC = 1, 2
# securegcm.proto:284-285      GcmMetadata { required Type type = 1; optional int32 version = 2; }
# securegcm.proto:268          Type DEVICE_TO_DEVICE_MESSAGE = 13;
# d2d_crypto_ops.cc:35,58-60   version = kSecureGcmProtocolVersion = 1
DEVICE_TO_DEVICE_MESSAGE = 13
# device_to_device_messages.proto:29,32  DeviceToDeviceMessage { bytes message = 1; int32 sequence_number = 2; }

# --- constants --------------------------------------------------------------------------------------------
# ukey2_handshake.cc:32,35 and Ukey2Handshake.java:382,517.
# The C++ auth salt is built as string(kUkey2VerificationStringSalt, sizeof(...)) (ukey2_handshake.cc:226), so
# it carries the trailing NUL, while the Java code, NearDrop and pyquickshare use the 13 bytes without it.
# Both give the same key: HKDF-Extract is HMAC keyed with the salt (crypto_ops.cc:57-68) and HMAC pads keys
# shorter than the 64-byte SHA-256 block with zeros. The assertion below pins that down.
AUTH_SALT = b"UKEY2 v1 auth"
NEXT_SALT = b"UKEY2 v1 next"
# d2d_crypto_ops.cc:42-45 hard-codes this salt; it is SHA-256("D2D") (NearDrop PROTOCOL.md:155).
D2D_SALT = bytes.fromhex("82aa55a0d397f88346ca1cee8d3909b95f13fa7deb1d4ab38376b8256da85510")
# crypto_ops.cc:51-55 kSalt = SHA-256("SecureMessage"), used to derive the ENC/SIG keys (crypto_ops.cc:111-126).
SECUREMESSAGE_SALT = bytes.fromhex("bf9d2a53c63616d75db0a7165b91c1ef73e537f2427405fa23610a4be657642e")
# crypto_ops.cc:248-256 purpose = "ENC:" + EncScheme and "SIG:" + SigScheme, i.e. "ENC:2" and "SIG:1".
ENC_PURPOSE = b"ENC:%d" % AES_256_CBC
SIG_PURPOSE = b"SIG:%d" % HMAC_SHA256
# ukey2_handshake.cc:44 kNextProtocol
NEXT_PROTOCOL = b"AES_256_CBC-HMAC_SHA256"

assert hashlib.sha256(b"D2D").digest() == D2D_SALT
assert hashlib.sha256(b"SecureMessage").digest() == SECUREMESSAGE_SALT
assert hmac.digest(AUTH_SALT, b"x", "sha256") == hmac.digest(AUTH_SALT + b"\0", b"x", "sha256")

CURVE = ec.SECP256R1()


# --- tiny protobuf encoder (only non-negative varints and length-delimited fields are needed) ---------------
def varint(n):
    assert n >= 0
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def pb_varint(field, value):
    return varint(field << 3) + varint(value)


def pb_bytes(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


# --- UKEY2 ---------------------------------------------------------------------------------------------------
def private_key(scalar_hex):
    return ec.derive_private_key(int(scalar_hex, 16), CURVE)


def twos_complement(n):
    # Java BigInteger.toByteArray() for n > 0: the minimal big-endian form plus a 0x00 byte only when the top
    # bit is set (PublicKeyProtoUtil.java:502-508). NearDrop (InboundNearbyConnection.swift:205-206,
    # asSignedBytes) and rquickshare (utils.rs encode_point, to_signed_bytes_be) send this form too.
    return n.to_bytes(n.bit_length() // 8 + 1, "big")


def twos_complement_cpp(n):
    # The C++ reference always prepends 0x00 to the minimal magnitude (crypto_ops_openssl.cc:808-815,
    # BN_bn2bin then Prepend("\x00")), so a coordinate with a clear top bit gets a redundant 0x00 byte;
    # pyquickshare's to_twos_complement (ukey2.py:30-39) does the same. Both forms are valid two's complement
    # and the C++ parser accepts up to 33 bytes (crypto_ops.cc:424-431), so a parser must accept both.
    return b"\0" + n.to_bytes((n.bit_length() + 7) // 8, "big")


def generic_public_key(pub, encode=twos_complement):
    # PublicKeyProtoUtil::EncodePublicKey (public_key_proto_util.cc:23-65).
    nums = pub.public_numbers()
    ec_key = pb_bytes(1, encode(nums.x)) + pb_bytes(2, encode(nums.y))
    return pb_varint(1, EC_P256) + pb_bytes(2, ec_key)


def ukey2_message(message_type, data):
    # UKey2Handshake::MakeUkey2Message (ukey2_handshake.cc:685-708).
    return pb_varint(1, message_type) + pb_bytes(2, data)


def client_finish(client_pub):
    # ukey2_handshake.cc:589-605: Ukey2Message{CLIENT_FINISH, Ukey2ClientFinished{public_key}}.
    return ukey2_message(UKEY2_CLIENT_FINISH, pb_bytes(1, generic_public_key(client_pub)))


def client_init(random, finish):
    # ukey2_handshake.cc:609-648: the commitment is SHA-512 of the whole serialized CLIENT_FINISH Ukey2Message.
    commitment = pb_varint(1, P256_SHA512) + pb_bytes(2, hashlib.sha512(finish).digest())
    body = pb_varint(1, 1) + pb_bytes(2, random) + pb_bytes(3, commitment) + pb_bytes(4, NEXT_PROTOCOL)
    return ukey2_message(UKEY2_CLIENT_INIT, body)


def server_init(random, server_pub):
    # ukey2_handshake.cc:671-679.
    body = pb_varint(1, 1) + pb_bytes(2, random) + pb_varint(3, P256_SHA512)
    body += pb_bytes(4, generic_public_key(server_pub))
    return ukey2_message(UKEY2_SERVER_INIT, body)


def shared_x(priv, peer_pub):
    # OpenSSL ECDH (crypto_ops_openssl.cc:494-554, EVP_PKEY_derive) and cryptography's exchange() both return
    # the x coordinate as a fixed 32-byte big-endian value, leading zero bytes included.
    x = priv.exchange(ec.ECDH(), peer_pub)
    assert len(x) == 32
    return x


def derived_secret(x):
    # CryptoOps::KeyAgreementSha256 (crypto_ops.cc:221-246): SHA-256 of the fixed-width ECDH output.
    # NearDrop hashes x.asMagnitudeBytes() (NearbyConnection.swift:362-365), which drops leading zero bytes and
    # so disagrees with every other peer about 1 time in 256; we follow the reference (see set 2).
    return hashlib.sha256(x).digest()


def hkdf(ikm, salt, info):
    # CryptoOps::Hkdf (crypto_ops.cc:90-109) is RFC 5869 HKDF-SHA256 with a single 32-byte output block.
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def c_rem(a, m):
    r = abs(a) % m
    return -r if a < 0 else r


def floor_rem(a, m):
    return a % m


def pin_hash(auth_key, rem=c_rem):
    # nearby share_session.cc TokenToFourDigitString, NearDrop NearbyConnection.swift:307-321, rquickshare
    # utils.rs to_four_digit_string: every byte as a signed int8, C/Swift/Rust % (truncates toward zero, so the
    # hash can go negative), then "%04d" of abs(). |hash| stays below 9973 * 129, so no 32-bit overflow.
    # Python's % floors instead, hence c_rem; pyquickshare uses math.fmod for the same reason (receive.py:60-73).
    # rem=floor_rem gives what a port using flooring % would compute, for information only (set 3).
    h, mult = 0, 1
    for b in auth_key:
        h = rem(h + (b - 256 if b > 127 else b) * mult, 9973)
        mult = mult * 31 % 9973  # mult is never negative, so here both kinds of % agree
    return h


def pin_edge_key(n):
    # Set 3 candidates: SHA-256("hexd quickshare pin" || n as 4 bytes big-endian).
    return hashlib.sha256(b"hexd quickshare pin" + n.to_bytes(4, "big")).digest()


def session_keys(secret, init, resp):
    # ukey2_handshake.cc:224-227 (auth) and 260-262 (next): info = wrapped_client_init_ + wrapped_server_init_,
    # i.e. the complete serialized Ukey2Message wrappers exactly as sent (ukey2_handshake.cc:130,142,382,469;
    # Ukey2Handshake.java:318,323,687,777), not the inner Ukey2ClientInit / Ukey2ServerInit and without the
    # 4-byte big-endian frame length that Nearby Connections puts in front of each message on TCP
    # (PROTOCOL.md:141). NearDrop (InboundNearbyConnection.swift:55,213) and pyquickshare (ukey2.py m1 + m2)
    # hash the same bytes.
    keys = {"auth_key": hkdf(secret, AUTH_SALT, init + resp), "next_key": hkdf(secret, NEXT_SALT, init + resp)}
    # ukey2_handshake.cc:271-274 via D2DCryptoOps::DeriveNewKeyForPurpose (d2d_crypto_ops.cc:120-136).
    for side in ("client", "server"):
        d2d = hkdf(keys["next_key"], D2D_SALT, side.encode())
        keys["d2d_%s_key" % side] = d2d
        # CryptoOps::Encrypt / Sign derive these per message from the D2D key (crypto_ops.cc:200-204, 289-301).
        keys["%s_enc_key" % side] = hkdf(d2d, SECUREMESSAGE_SALT, ENC_PURPOSE)
        keys["%s_hmac_key" % side] = hkdf(d2d, SECUREMESSAGE_SALT, SIG_PURPOSE)
    return keys


# --- secure channel ------------------------------------------------------------------------------------------
def secure_message(enc_key, hmac_key, iv, message, sequence_number):
    # D2DConnectionContextV1::EncodeMessageToPeer (d2d_connection_context_v1.cc:105-114) wraps the payload in a
    # DeviceToDeviceMessage (d2d_connection_context_v1.cc:70-76) and D2DCryptoOps::SigncryptPayload
    # (d2d_crypto_ops.cc:56-76) sign-crypts it with one D2D key for both signing and encryption, so
    # TaggedPlaintextRequired is false (crypto_ops.cc:416-422) and no header digest is prepended to the
    # plaintext (secure_message_builder.cc:139-163). The sequence number is incremented before use from 0
    # (ukey2_handshake.cc:285-286), so each direction's first message carries 1.
    d2d_message = pb_bytes(1, message) + pb_varint(2, sequence_number)
    padder = padding.PKCS7(128).padder()  # PKCS#5/7 (crypto_ops_openssl.cc:284-285)
    padded = padder.update(d2d_message) + padder.finalize()
    encryptor = Cipher(algorithms.AES(enc_key), modes.CBC(iv)).encryptor()
    body = encryptor.update(padded) + encryptor.finalize()
    metadata = pb_varint(1, DEVICE_TO_DEVICE_MESSAGE) + pb_varint(2, 1)
    header = pb_varint(1, HMAC_SHA256) + pb_varint(2, AES_256_CBC) + pb_bytes(5, iv) + pb_bytes(6, metadata)
    # SerializeHeaderAndBody (secure_message_builder.cc:217-224) writes the serialized Header as field 1.
    header_and_body = pb_bytes(1, header) + pb_bytes(2, body)
    # CreateSignedResult (secure_message_builder.cc:226-246): HMAC over header_and_body, no associated data.
    signature = hmac.digest(hmac_key, header_and_body, "sha256")
    return {
        "d2d_message": d2d_message,
        "gcm_metadata": metadata,
        "header": header,
        "body": body,
        "header_and_body": header_and_body,
        "signature": signature,
        "secure_message": pb_bytes(1, header_and_body) + pb_bytes(2, signature),
    }


def out(name, value):
    print("%s = %s" % (name, value.hex() if isinstance(value, bytes) else value))


def public_xy(prefix, key):
    nums = key.public_key().public_numbers()
    out(prefix + "_public_x", nums.x.to_bytes(32, "big"))
    out(prefix + "_public_y", nums.y.to_bytes(32, "big"))


# --- set 1: a complete handshake and one message each way -------------------------------------------------
# 0x06..06 gives a client public key whose x has its top bit set (0x00 prefix in every encoding) and whose y
# does not (32 bytes in the Java form, 33 in the C++ form), so both encoding branches are exercised.
CLIENT_SCALAR = "06" * 32
SERVER_SCALAR = "03" * 32
CLIENT_RANDOM = bytes(range(0x00, 0x20))
SERVER_RANDOM = bytes(range(0x20, 0x40))
C2S_IV, C2S_MESSAGE = bytes(range(0x40, 0x50)), b"hexd quickshare test message"  # 32-byte D2D message
S2C_IV, S2C_MESSAGE = bytes(range(0x50, 0x60)), b"hello from server"
# The c2s DeviceToDeviceMessage is exactly two AES blocks, so PKCS#7 appends a whole block of 0x10; the s2c one
# is 21 bytes and gets 11 bytes of padding. Each direction counts its own sequence numbers from 1; the s2c
# vector uses 2, i.e. the server's second message.

client, server = private_key(CLIENT_SCALAR), private_key(SERVER_SCALAR)
client_nums = client.public_key().public_numbers()
assert client_nums.x >> 255 == 1 and client_nums.y >> 255 == 0

print("# set 1: UKEY2 handshake (client = initiator/sender, server = responder/receiver) and secure channel")
out("set1_client_private", bytes.fromhex(CLIENT_SCALAR))
out("set1_server_private", bytes.fromhex(SERVER_SCALAR))
public_xy("set1_client", client)
public_xy("set1_server", server)
out("set1_client_generic_public_key", generic_public_key(client.public_key()))
out("set1_client_generic_public_key_cpp_form", generic_public_key(client.public_key(), twos_complement_cpp))
out("set1_server_generic_public_key", generic_public_key(server.public_key()))
out("set1_client_random", CLIENT_RANDOM)
out("set1_server_random", SERVER_RANDOM)
finish = client_finish(client.public_key())
init = client_init(CLIENT_RANDOM, finish)
resp = server_init(SERVER_RANDOM, server.public_key())
out("set1_client_finish", finish)
out("set1_client_init", init)
out("set1_server_init", resp)
x = shared_x(client, server.public_key())
assert x == shared_x(server, client.public_key())
out("set1_shared_x", x)
out("set1_derived_secret", derived_secret(x))
keys = session_keys(derived_secret(x), init, resp)
for name in ("auth_key", "next_key", "d2d_client_key", "d2d_server_key", "client_enc_key", "client_hmac_key",
             "server_enc_key", "server_hmac_key"):
    out("set1_" + name, keys[name])
out("set1_pin", "%04d" % abs(pin_hash(keys["auth_key"])))
for prefix, side, iv, message, seq in (("set1_c2s", "client", C2S_IV, C2S_MESSAGE, 1),
                                       ("set1_s2c", "server", S2C_IV, S2C_MESSAGE, 2)):
    out(prefix + "_message", message)
    out(prefix + "_iv", iv)
    out(prefix + "_sequence_number", seq)
    parts = secure_message(keys[side + "_enc_key"], keys[side + "_hmac_key"], iv, message, seq)
    for name, value in parts.items():
        out(prefix + "_" + name, value)

# --- set 2: ECDH output with a leading zero byte -------------------------------------------------------------
# Keep the set 1 client and count the server scalar up from the set 1 server scalar until x[0] == 0.
print("# set 2: shared x with a leading zero byte; derived secret hashes all 32 bytes")
scalar = int(SERVER_SCALAR, 16)
while True:
    scalar += 1
    peer = ec.derive_private_key(scalar, CURVE)
    x = shared_x(client, peer.public_key())
    if x[0] == 0:
        break
out("set2_client_private", bytes.fromhex(CLIENT_SCALAR))
out("set2_server_private", scalar.to_bytes(32, "big"))
public_xy("set2_client", client)
public_xy("set2_server", peer)
out("set2_shared_x", x)
out("set2_derived_secret", derived_secret(x))
# For information only: NearDrop's result, SHA-256 of x without its leading zero bytes.
out("set2_derived_secret_minimal_form_info", hashlib.sha256(x.lstrip(b"\0")).digest())

# --- set 3: PIN whose hash is negative before abs() ----------------------------------------------------------
# The first pin_edge_key(0), pin_edge_key(1), ... whose hash is negative.
print("# set 3: PIN whose truncating-remainder hash is negative before abs()")
counter = 0
while pin_hash(pin_edge_key(counter)) >= 0:
    counter += 1
auth_key = pin_edge_key(counter)
out("set3_auth_key", auth_key)
out("set3_hash_before_abs", pin_hash(auth_key))
out("set3_pin", "%04d" % abs(pin_hash(auth_key)))
# For information only: a port that used flooring % (Python) would show this, which Android would not.
out("set3_pin_python_floor_mod_info", "%04d" % pin_hash(auth_key, floor_rem))
