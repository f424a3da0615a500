import Glibc
import Testing

@testable import HexNet

/// The descriptors new work leaves free: what strangers can cause keeps more than what the user asked for.
@Suite(.timeLimit(.minutes(1))) struct DescriptorHeadroomTests {
    @Test func anAcceptLeavesThirtyTwoFree() {
        // Under 128: descriptors 0...95 leave 32 or more free; 96 would leave 31.
        #expect(DescriptorHeadroom.allows(95, keeping: DescriptorHeadroom.kept, under: 128))
        #expect(!DescriptorHeadroom.allows(96, keeping: DescriptorHeadroom.kept, under: 128))
    }

    @Test func theUsersOwnWorkGoesFurtherThanStrangers() {
        // A descriptor an accept may not take, the user's hexctl or a hex the user sends still may.
        #expect(!DescriptorHeadroom.allows(100, keeping: DescriptorHeadroom.kept, under: 128))
        #expect(DescriptorHeadroom.allows(100, keeping: DescriptorHeadroom.keptByOwnWork, under: 128))
        #expect(DescriptorHeadroom.allows(111, keeping: DescriptorHeadroom.keptByOwnWork, under: 128))
        #expect(!DescriptorHeadroom.allows(112, keeping: DescriptorHeadroom.keptByOwnWork, under: 128))
        #expect(DescriptorHeadroom.keptByOwnWork < DescriptorHeadroom.kept)
    }

    @Test func aFailedCallIsNotRefusedAgain() {
        #expect(DescriptorHeadroom.allows(-1, keeping: DescriptorHeadroom.kept, under: 10))
    }

    @Test func theProcessLimitIsTheOneRead() throws {
        // The test process runs far from its limit: a low descriptor is allowed, one past the limit is not.
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let atTheLimit = try #require(Int32(exactly: limit.rlim_cur))
        #expect(DescriptorHeadroom.allows(3))
        #expect(!DescriptorHeadroom.allows(atTheLimit, keeping: 0))
    }
}
