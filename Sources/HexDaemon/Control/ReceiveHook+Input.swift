import HexControl
import HexKit

extension ReceiveHook {
    /// What the command reads on its standard input for `hex`: one line, the hex in the control API's
    /// form, so that a script reads both alike.
    static func input(for hex: Hex) throws -> [UInt8] {
        try ControlCoding.encode(hex) + [UInt8(ascii: "\n")]
    }
}
