import Glibc
import HexCarrier
import HexKit

/// The free space of the data directory's disk against the store's floors, read before each
/// batch of Stores, and the reserve file that gives the disk back enough for hexd to go on when
/// something else filled it. Used on the store's thread only.
struct DiskWatch {
    private let directory: String
    private let reservePath: String
    private let settings: StoreSettings
    /// Whether the reserve file is there, at its full size.
    private(set) var holdsReserve = false
    /// What the last reading refused, to log a change once.
    private var lastRefusing = Refusing.nothing

    /// Whom the disk's free space refuses.
    enum Refusing: String, Sendable {
        case nothing
        case strangers = "senders not paired"
        case everyone = "every Store"

        init(_ room: DiskRoom) {
            self =
                room.refusal(ofBytes: 0, paired: true) != nil
                ? .everyone
                : room.refusal(ofBytes: 0, paired: false) != nil ? .strangers : .nothing
        }
    }

    /// A change the daemon logs.
    enum Change: Equatable {
        case refusing(Refusing, free: Int, floor: Int)
        case reserveReleased(bytes: Int, free: Int)
        case reserveMade(bytes: Int)
    }

    init(directory: String, reservePath: String, settings: StoreSettings) {
        self.directory = directory
        self.reservePath = reservePath
        self.settings = settings
        var status = stat()
        holdsReserve =
            settings.reserve > 0 && stat(reservePath, &status) == 0
            && Int(status.st_size) >= settings.reserve
    }

    /// The room for the next batch of Stores, with what changed since the last reading: the
    /// reserve is given back when the disk has less than it free, and made again once the disk
    /// has it, twice over, above the hard floor. Unlimited when the disk cannot be read.
    mutating func room() -> (room: DiskRoom, changes: [Change]) {
        guard var space = DiskSpace.of(directory) else { return (.unlimited, []) }
        var changes: [Change] = []
        let floor = settings.freeFloor.bytes(ofDiskSize: space.size)
        let hardFloor = settings.hardFreeFloor.bytes(ofDiskSize: space.size)
        if holdsReserve && space.free < settings.reserve {
            releaseReserve()
            changes.append(.reserveReleased(bytes: settings.reserve, free: space.free))
            space.free += settings.reserve
        } else if !holdsReserve && settings.reserve > 0 && space.free / 2 > hardFloor / 2 + settings.reserve {
            if makeReserve() {
                changes.append(.reserveMade(bytes: settings.reserve))
                space.free -= settings.reserve
            }
        }
        let room = DiskRoom(free: space.free, floor: floor, hardFloor: hardFloor)
        let refusing = Refusing(room)
        if refusing != lastRefusing {
            lastRefusing = refusing
            changes.append(.refusing(refusing, free: space.free, floor: refusing == .everyone ? hardFloor : floor))
        }
        return (room, changes)
    }

    /// The disk now, for `status`, without acting on it; nil when it cannot be read.
    func reading() -> DiskRoom? {
        DiskSpace.of(directory).map { space in
            DiskRoom(
                free: space.free, floor: settings.freeFloor.bytes(ofDiskSize: space.size),
                hardFloor: settings.hardFreeFloor.bytes(ofDiskSize: space.size))
        }
    }

    /// A write failed for lack of space: the reserve goes back to the disk, if it is held.
    mutating func diskFilled() -> Change? {
        guard holdsReserve, let space = DiskSpace.of(directory) else { return nil }
        releaseReserve()
        return .reserveReleased(bytes: settings.reserve, free: space.free)
    }

    private mutating func releaseReserve() {
        unlink(reservePath)
        holdsReserve = false
    }

    /// Allocates the reserve's blocks (not a sparse file: they must be the disk's to give back).
    private mutating func makeReserve() -> Bool {
        let descriptor = open(reservePath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard posix_fallocate(descriptor, 0, off_t(settings.reserve)) == 0 else {
            unlink(reservePath)
            return false
        }
        holdsReserve = true
        return true
    }
}
