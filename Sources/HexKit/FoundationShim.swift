// HexKit needs only JSON coding, Data, Date and UUID: FoundationEssentials gives them without
// linking ICU, which keeps the executables small on Linux.
#if canImport(FoundationEssentials)
@_exported import FoundationEssentials
#else
@_exported import Foundation
#endif
