import HexCarrier
import HexDBus
import QuickShareCore

/// Wakes phones nearby so that they publish themselves as Quick Share receivers: BlueZ advertises
/// `NudgeAdvertisement` while `NudgeMachine` wants it (a send to a Quick Share device waits, or the
/// person just asked to look again). The machine decides; this actor registers and withdraws the
/// advertisement (`BlueZAdvertiser`) and says in the status how it goes. The system bus is only
/// reached while phones are to be woken.
actor BluetoothNudge {
    private var machine = NudgeMachine()
    /// The system bus, or why there is none to reach.
    private let bus: Result<DBusAddress, DBusError>
    private let enabled: Bool
    private let logger: Logger
    private var advertiser: BlueZAdvertiser?
    /// Counts registrations, so that a late word from an advertiser that is gone changes nothing.
    private var generation = 0
    private let bell = Doorbell()

    init(enabled: Bool, environment: [String: String], logger: Logger) {
        self.enabled = enabled
        self.logger = logger
        bus = Result { () throws(DBusError) in try DBusAddress.system(environment: environment) }
    }

    /// An attempt at a send to `device` failed: it waits, and phones are woken while it does.
    func sendWaits(for device: String) {
        machine.sendWaits(for: device, at: .now)
        bell.ring()
    }

    /// A send to `device` went through.
    func sendWent(to device: String) {
        machine.sendWent(to: device)
        bell.ring()
    }

    /// The person asked to look for devices again (`hexctl peers --refresh`): phones are woken for a minute.
    func refreshed() {
        machine.refreshed(at: .now)
        bell.ring()
    }

    /// What `hexctl status` says about phones being listed.
    var note: String {
        let listed = "a phone is listed as a receiver while its Quick Share receive screen is open"
        guard enabled else { return "--quickshare-bluetooth off: \(listed) (Google's Windows app, while it runs)" }
        return switch machine.phase {
        case .idle, .unregistering:
            "hexd wakes phones nearby by Bluetooth LE (through BlueZ) while a send to a Quick Share device waits, "
                + "and for a minute after hexctl peers --refresh"
                + (machine.lastFailure.map { " (the last time, it could not: \($0))" } ?? "") + "; otherwise \(listed)"
        case .registering: "asking BlueZ to wake phones nearby by Bluetooth LE"
        case .advertising: "waking phones nearby by Bluetooth LE through BlueZ (\(advertiser?.adapter ?? "?"))"
        case .unavailable(let reason, _): "cannot wake phones by Bluetooth LE: \(reason); \(listed)"
        }
    }

    /// Does what the machine asks until cancelled, then withdraws the advertisement.
    func run() async {
        guard enabled else { return }
        while !Task.isCancelled {
            switch machine.next(at: .now) {
            case .register:
                await register()
            case .unregister:
                await advertiser?.unregister()
                advertiser = nil
                machine.unregistered()
                logger.info("Quick Share: stopped waking phones by Bluetooth LE")
            case .wait(let until):
                await bell.wait(until: until, tolerance: .seconds(1))
            }
        }
        await advertiser?.unregister()
        advertiser = nil
    }

    private func register() async {
        do {
            let address = try bus.get()
            let random = try SecureRandom.bytes(NudgeAdvertisement.randomBytes)
            generation += 1
            let registration = generation
            let made = try await BlueZAdvertiser.register(NudgeAdvertisement(random: random), on: address) {
                await self.released(registration)
            }
            // The bus may have gone between BlueZ's answer and now.
            guard !made.isClosed else {
                made.close()
                throw BlueZAdvertiser.Failure(description: "the system bus went away")
            }
            advertiser = made
            machine.registered()
            logger.info("Quick Share: waking phones nearby by Bluetooth LE through BlueZ (\(made.adapter))")
        } catch {
            machine.failed("\(error)", at: .now)
            logger.limited("quickshare bluetooth", .info, "Quick Share: cannot wake phones by Bluetooth LE: \(error)")
        }
    }

    /// BlueZ ended the advertisement of `registration` by itself, or the bus went away.
    private func released(_ registration: Int) {
        guard registration == generation, machine.phase == .advertising else { return }
        machine.released(at: .now)
        advertiser?.close()
        advertiser = nil
        logger.info("Quick Share: BlueZ ended the Bluetooth LE advertisement")
        bell.ring()
    }
}
