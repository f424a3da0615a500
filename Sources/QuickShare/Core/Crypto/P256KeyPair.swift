import COpenSSL

/// A P-256 key pair for one UKEY2 handshake, and the ECDH agreement with the peer's public key.
///
/// Unchecked Sendable: the key is immutable once made; libcrypto's calls on it only read.
public final class P256KeyPair: @unchecked Sendable {
    /// The public key's affine coordinates, 32 big-endian bytes each.
    public let x: [UInt8]
    public let y: [UInt8]
    private let group: OpaquePointer
    private let scalar: OpaquePointer

    /// A fresh key pair from libcrypto's generator.
    public convenience init() throws(QuickShareError) {
        try self.init(scalar: nil)
    }

    /// The key pair of a given private scalar (32 big-endian bytes, below the group order), for tests
    /// that check the derivation against vectors computed elsewhere.
    public convenience init(privateScalar: [UInt8]) throws(QuickShareError) {
        guard privateScalar.count == 32 else { throw QuickShareError("a P-256 private key is 32 bytes") }
        try self.init(scalar: privateScalar)
    }

    private init(scalar bytes: [UInt8]?) throws(QuickShareError) {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            throw QuickShareError("libcrypto has no P-256")
        }
        guard let scalar = BN_secure_new() ?? BN_new() else {
            EC_GROUP_free(group)
            throw QuickShareError("libcrypto could not allocate a number")
        }
        self.group = group
        self.scalar = scalar
        var coordinates: ([UInt8], [UInt8])?
        if let bytes {
            if BN_bin2bn(bytes, 32, scalar) != nil, BN_is_zero(scalar) == 0,
                BN_cmp(scalar, EC_GROUP_get0_order(group)) < 0
            {
                coordinates = Self.publicPoint(of: scalar, in: group)
            }
        } else if BN_rand_range(scalar, EC_GROUP_get0_order(group)) == 1, BN_is_zero(scalar) == 0 {
            coordinates = Self.publicPoint(of: scalar, in: group)
        }
        guard let coordinates else {
            x = []
            y = []
            throw QuickShareError("no P-256 key could be made")
        }
        (x, y) = coordinates
    }

    deinit {
        BN_clear_free(scalar)
        EC_GROUP_free(group)
    }

    /// The x coordinate of the ECDH point with the peer's public key, as 32 big-endian bytes (the
    /// fixed-width form google/ukey2 hashes, leading zeros kept).
    ///
    /// - Throws: `QuickShareError` when the coordinates are not a point on P-256 (an invalid-curve
    ///   attack), or are not numbers of at most 32 bytes.
    public func sharedSecret(peerX: [UInt8], peerY: [UInt8]) throws(QuickShareError) -> [UInt8] {
        guard peerX.count <= 32, peerY.count <= 32 else { throw QuickShareError("a P-256 coordinate is over 32 bytes") }
        let context = BN_CTX_new()
        let point = EC_POINT_new(group)
        let shared = EC_POINT_new(group)
        let pointX = BN_new()
        let pointY = BN_new()
        defer {
            BN_CTX_free(context)
            EC_POINT_free(point)
            EC_POINT_clear_free(shared)
            BN_clear_free(pointX)
            BN_free(pointY)
        }
        guard let context, let point, let shared, let pointX, let pointY else {
            throw QuickShareError("libcrypto could not allocate a point")
        }
        guard BN_bin2bn(peerX, Int32(peerX.count), pointX) != nil, BN_bin2bn(peerY, Int32(peerY.count), pointY) != nil,
            EC_POINT_set_affine_coordinates(group, point, pointX, pointY, context) == 1,
            EC_POINT_is_on_curve(group, point, context) == 1
        else { throw QuickShareError("the peer's public key is not a point on P-256") }
        guard EC_POINT_mul(group, shared, nil, point, scalar, context) == 1,
            EC_POINT_is_at_infinity(group, shared) == 0,
            EC_POINT_get_affine_coordinates(group, shared, pointX, nil, context) == 1
        else { throw QuickShareError("the key agreement failed") }
        var secret = [UInt8](repeating: 0, count: 32)
        guard BN_bn2binpad(pointX, &secret, 32) == 32 else { throw QuickShareError("the key agreement failed") }
        return secret
    }

    private static func publicPoint(of scalar: OpaquePointer, in group: OpaquePointer) -> ([UInt8], [UInt8])? {
        let context = BN_CTX_new()
        let point = EC_POINT_new(group)
        let x = BN_new()
        let y = BN_new()
        defer {
            BN_CTX_free(context)
            EC_POINT_free(point)
            BN_free(x)
            BN_free(y)
        }
        guard let context, let point, let x, let y else { return nil }
        var xBytes = [UInt8](repeating: 0, count: 32)
        var yBytes = [UInt8](repeating: 0, count: 32)
        guard EC_POINT_mul(group, point, scalar, nil, nil, context) == 1,
            EC_POINT_get_affine_coordinates(group, point, x, y, context) == 1,
            BN_bn2binpad(x, &xBytes, 32) == 32, BN_bn2binpad(y, &yBytes, 32) == 32
        else { return nil }
        return (xBytes, yBytes)
    }
}
