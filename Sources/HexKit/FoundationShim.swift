// HexKit needs only JSON coding, Data, Date and UUID: FoundationEssentials gives them without
// linking ICU, which keeps the executables small on Linux.
@_exported import FoundationEssentials
