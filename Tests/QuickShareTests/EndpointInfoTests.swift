import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct EndpointInfoTests {
    @Test func base64URLRoundTripsEveryLength() {
        for count in 0..<12 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 91 &+ 250) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab+c") == nil)
    }

    @Test func anInstanceNameCarriesTheEndpointID() {
        let name = QuickShareService.instanceName(endpointID: Array("ABCD".utf8))
        // pyquickshare's make_service_name for b"ABCD": 0x23 "ABCD" FC 9F 5E 00 00.
        #expect(name == "I0FCQ0T8n14AAA")
        #expect(QuickShareService.endpointID(ofInstance: name) == Array("ABCD".utf8))
        #expect(QuickShareService.endpointID(ofInstance: "aGV4ZA") == nil)
    }

    @Test func endpointInfoRoundTripsAndToleratesPhonesWithoutNames() throws {
        let info = EndpointInfo(deviceType: .laptop, name: "Desk", random: [UInt8](repeating: 9, count: 16))
        #expect(info.bytes.first == 0x06)
        #expect(EndpointInfo(info.bytes) == info)
        let hidden = try #require(EndpointInfo([0x12] + [UInt8](repeating: 1, count: 16)))
        #expect(hidden.name == nil)
        #expect(hidden.deviceType == .phone)
        #expect(EndpointInfo([0x02] + [UInt8](repeating: 1, count: 16) + [9, 65])?.name == nil)
        #expect(EndpointInfo([1, 2, 3]) == nil)
        let long = EndpointInfo(deviceType: .laptop, name: String(repeating: "é", count: 200), random: [])
        #expect(long.bytes[17] == 254)
    }
}
