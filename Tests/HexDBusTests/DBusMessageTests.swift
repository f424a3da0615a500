import Testing

@testable import HexDBus

@Suite(.timeLimit(.minutes(5))) struct DBusMessageTests {
    private let notify: DBusMessage = {
        var message = DBusMessage.call(
            "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications", "Notify",
            [
                .string("hexd"), .uint32(7), .string(""), .string("Grace sent a hex"),
                .string("Trip photos\nhttps://a"),
                .strings(["open", "Open", "inbox", "Inbox"]),
                .dictionary(
                    key: .string, value: .variant,
                    [
                        .init(.string("urgency"), .variant(.byte(1))),
                        .init(.string("category"), .variant(.string("transfer.complete"))),
                        .init(.string("x"), .variant(.structure([.int64(-5), .double(2.5), .boolean(true)]))),
                    ]),
                .int32(-1),
            ])
        message.serial = 42
        return message
    }()

    @Test func aMessageReadsBackAsItWasWritten() throws {
        let bytes = notify.encoded()
        #expect(bytes[0] == UInt8(ascii: "l") && bytes[1] == 1)
        #expect(try DBusMessage.decode(bytes) == notify)
        #expect(notify.signature == "susssasa{sv}i")
    }

    @Test func theFixedHeaderIsTheSpecifications() {
        var hello = DBusMessage.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")
        hello.serial = 1
        let bytes = hello.encoded()
        // 'l', method call, no flags, version 1, an empty body, serial 1, then the fields' length.
        #expect(Array(bytes.prefix(12)) == [0x6C, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0])
        #expect(bytes.count % 8 == 0, "a header without a body ends 8-aligned")
        // The path field: code 1, signature "o", the path's length at offset 20.
        #expect(Array(bytes[16..<24]) == [1, 1, UInt8(ascii: "o"), 0, 21, 0, 0, 0])
    }

    @Test func aStreamOfMessagesIsCutWhereverItIsSplit() throws {
        var second = notify
        second.serial = 43
        second.body = [.string("another")]
        let stream = notify.encoded() + second.encoded()
        for piece in [1, 3, 8, 100, stream.count] {
            var reader = DBusMessageReader()
            var messages: [DBusMessage] = []
            var offset = 0
            while offset < stream.count {
                reader.append(stream[offset..<min(offset + piece, stream.count)])
                offset += piece
                while let message = try reader.next() { messages.append(message) }
            }
            #expect(messages == [notify, second], "in pieces of \(piece)")
        }
    }

    @Test func malformedMessagesAreRefusedNeverTrapped() throws {
        let bytes = notify.encoded()
        // Every truncation, and every single byte changed to each of a few values: an error or a
        // message, never a trap.
        for length in 0..<bytes.count {
            var reader = DBusMessageReader()
            reader.append(bytes[..<length])
            _ = try? reader.next()
        }
        for index in bytes.indices {
            for value: UInt8 in [0, 1, 0x7F, 0xFF] {
                var changed = bytes
                changed[index] = value
                _ = try? DBusMessage.decode(changed)
            }
        }
        var huge = bytes
        huge[4...7] = [0xFF, 0xFF, 0xFF, 0x0F]
        var reader = DBusMessageReader()
        reader.append(huge)
        #expect { try reader.next() } throws: { error in
            if case .tooLarge? = error as? DBusError { return true }
            return false
        }
        var wrongOrder = bytes
        wrongOrder[0] = UInt8(ascii: "X")
        #expect(throws: DBusError.self) { try DBusMessage.decode(wrongOrder) }
    }

    @Test(arguments: [
        "a{vs}", "(", "()", "a", "a{s}", "a{ss", String(repeating: "a", count: 33) + "s",
        String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33), "z",
    ])
    func signaturesTheSpecificationForbidsAreRefused(signature: String) {
        #expect(throws: DBusError.self) { try DBusType.parse(signature) }
    }

    @Test func addressesOfAUnixSocketAreParsed() throws {
        #expect(try DBusAddress(parsing: "unix:path=/run/user/1000/bus") == .path("/run/user/1000/bus"))
        #expect(
            try DBusAddress(parsing: "tcp:host=x;unix:abstract=/tmp/dbus-AB%2c,guid=12")
                == .abstract("/tmp/dbus-AB,"))
        #expect(throws: DBusError.self) { try DBusAddress(parsing: "tcp:host=localhost,port=1") }
    }
}
