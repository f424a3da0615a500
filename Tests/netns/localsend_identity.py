"""The identity LocalSend 1.18 makes for itself, shared by the test peers written from its source
(localsend_sender.py, localsend_receiver.py): packages/core/src/crypto/cert.rs at af0416be."""
import datetime
import hashlib
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID


def make_identity(directory):
    """crypto/cert.rs generate_self_signed: RSA-2048, `CN=LocalSend User`, no SANs, valid 1975 to 4096 (rcgen's
    default); the fingerprint the SHA-256 of the DER in upper-case hex (fingerprint_from_cert_der)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "LocalSend User")])
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(datetime.datetime(1975, 1, 1, tzinfo=datetime.timezone.utc))
                   .not_valid_after(datetime.datetime(4096, 1, 1, tzinfo=datetime.timezone.utc))
                   .sign(key, hashes.SHA256()))
    key_path, cert_path = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    with open(key_path, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    with open(cert_path, "wb") as out:
        out.write(certificate.public_bytes(serialization.Encoding.PEM))
    fingerprint = hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest().upper()
    return key_path, cert_path, fingerprint
