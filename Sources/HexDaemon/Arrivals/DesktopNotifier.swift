import HexCarrier
import HexCommandLine
import HexDBus
import HexKit
import HexNet

/// Raises desktop notifications for what arrives (`hexd --notify`): each hex, with hexes one
/// sender sends within `NotifySettings.foldWindow` of each other folded into one notification
/// that is replaced (`replaces_id`) rather than stacked; each alert; each pairing request, with
/// its code. Its "Open" action opens the hex's one link, or the page; "Inbox" the page.
///
/// It speaks to `org.freedesktop.Notifications` on the session bus through `DBusConnection`,
/// connecting at the first thing to show (no bus traffic while nothing arrives). A bus that is
/// missing or goes away is not an error: it is logged once, and tried again at the next arrival,
/// at most every `retryInterval`.
struct DesktopNotifier: DaemonService {
    let address: DBusAddress
    /// What arrives, subscribed to before the daemon takes its first envelope.
    let arrivals: AsyncStream<Arrival>
    let settings: NotifySettings
    /// The page's URL with its token, when hexd serves it.
    let page: String?
    let browser: [String]
    let logger: Logger

    static let retryInterval: Duration = .seconds(30)

    func run() async {
        let session = Session(notifier: self)
        for await arrival in arrivals { await session.show(arrival) }
        await session.end()
    }

    /// The connection and what is on screen.
    private actor Session {
        let notifier: DesktopNotifier
        private var connection: DBusConnection?
        private var listener: Task<Void, Never>?
        private var markup = false
        private var lastAttempt: ContinuousClock.Instant?
        private var unavailableLogged = false
        /// The notification showing each sender's latest hexes, while it may still be replaced.
        private var folds: [String: Fold] = [:]
        /// What each notification's "open" and "inbox" actions open, by its id (at most 256).
        private var targets: [UInt32: (open: [String], inbox: String?)] = [:]
        private var targetOrder: [UInt32] = []

        struct Fold {
            var id: UInt32
            var hexes: [Hex]
            var last: ContinuousClock.Instant
        }

        init(notifier: DesktopNotifier) {
            self.notifier = notifier
        }

        func show(_ arrival: Arrival) async {
            guard let connection = await connect() else { return }
            let page = notifier.page
            switch arrival {
            case .hex(let hex):
                let now = ContinuousClock.now
                let sender = hex.senderUUID
                var fold =
                    folds[sender].flatMap { now - $0.last < notifier.settings.foldWindow ? $0 : nil }
                    ?? Fold(id: 0, hexes: [], last: now)
                fold.hexes = Array((fold.hexes + [hex]).suffix(50))
                fold.last = now
                let content = NotificationContent.hexes(fold.hexes, page: page, markup: markup)
                guard let shown = await notify(content, replacing: fold.id, on: connection) else { return }
                fold.id = shown
                folds = folds.filter { now - $0.value.last < notifier.settings.foldWindow }
                folds[sender] = fold
            case .pairRequest(let name, let peerUUID, let code):
                let content = NotificationContent.pairing(
                    name: name, id: peerUUID, code: code, page: page, markup: markup)
                _ = await notify(content, replacing: 0, on: connection)
            case .offerWaiting(let name, let peerUUID, let offer):
                let content = NotificationContent.offer(
                    name: name, id: peerUUID, offer: offer, page: page, markup: markup)
                _ = await notify(content, replacing: 0, on: connection)
            case .alert(let sender, let message):
                let content = NotificationContent.alert(from: sender, message: message, page: page, markup: markup)
                _ = await notify(content, replacing: 0, on: connection)
            }
        }

        /// Shows `content`; the id the server gave it, or nil when the call failed.
        private func notify(_ content: NotificationContent, replacing: UInt32, on connection: DBusConnection) async
            -> UInt32?
        {
            let call = DBusMessage.call(
                "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                "org.freedesktop.Notifications", "Notify",
                [
                    .string("hexd"), .uint32(replacing), .string("mail-message-new"), .string(content.summary),
                    .string(content.body), .strings(content.actions.flatMap { [$0.key, $0.label] }),
                    .dictionary(
                        key: .string, value: .variant,
                        [
                            .init(.string("category"), .variant(.string("transfer.complete"))),
                            .init(.string("desktop-entry"), .variant(.string("hexd"))),
                            .init(.string("urgency"), .variant(.byte(1))),
                        ]),
                    .int32(-1),
                ])
            do {
                let reply = try await connection.call(call)
                guard let id = reply.body.first?.uint32Value else { return nil }
                let offersInbox = content.actions.contains { $0.key == "inbox" }
                remember(id, open: content.openTargets, inbox: offersInbox ? notifier.page.map { $0 + "#inbox" } : nil)
                return id
            } catch {
                notifier.logger.limited("notify", .warning, "cannot raise a notification: \(error)")
                return nil
            }
        }

        private func remember(_ id: UInt32, open: [String], inbox: String?) {
            if targets.updateValue((open, inbox), forKey: id) == nil { targetOrder.append(id) }
            if targetOrder.count > 256 { targets[targetOrder.removeFirst()] = nil }
        }

        /// The connection, made (with its signal listener) when there is none or the last one
        /// ended; nil when the bus cannot be reached.
        private func connect() async -> DBusConnection? {
            if let connection, !connection.isClosed { return connection }
            if connection != nil {
                notifier.logger.info("the session bus went away: notifications stop until it is back")
                connection = nil
                folds = [:]
            }
            if let lastAttempt, ContinuousClock.now - lastAttempt < DesktopNotifier.retryInterval { return nil }
            lastAttempt = .now
            do {
                let made = try await DBusConnection.connect(to: notifier.address, timeout: .seconds(2))
                try await made.addMatch("type='signal',interface='org.freedesktop.Notifications'")
                let capabilities = try? await made.call(
                    .call(
                        "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                        "org.freedesktop.Notifications", "GetCapabilities"))
                if case .array(.string, let names)? = capabilities?.body.first {
                    markup = names.contains(.string("body-markup"))
                } else {
                    markup = false
                }
                connection = made
                unavailableLogged = false
                listener?.cancel()
                listener = Task { [weak self] in
                    for await signal in made.signals { await self?.handle(signal) }
                }
                return made
            } catch {
                if !unavailableLogged {
                    notifier.logger.info(
                        "no desktop notifications: \(error) (at \(notifier.address)); "
                            + "trying again when something arrives")
                    unavailableLogged = true
                }
                return nil
            }
        }

        private func handle(_ signal: DBusMessage) async {
            guard signal.interface == "org.freedesktop.Notifications", signal.body.count >= 2,
                let id = signal.body[0].uint32Value, let target = targets[id]
            else { return }
            switch (signal.member, signal.body[1]) {
            case ("ActionInvoked", .string("open")): await open(target.open)
            case ("ActionInvoked", .string("inbox")): await open(target.inbox.map { [$0] } ?? [])
            case ("NotificationClosed", _):
                targets[id] = nil
                targetOrder.removeAll { $0 == id }
                folds = folds.filter { $0.value.id != id }
            default: break
            }
        }

        private func open(_ urls: [String]) async {
            for url in urls {
                do {
                    try await ChildProcess.launch(notifier.browser + [url])
                } catch {
                    notifier.logger.warning("cannot open \(url.prefix(200)): \(error)")
                }
            }
        }

        func end() {
            listener?.cancel()
            connection?.close()
        }
    }
}
