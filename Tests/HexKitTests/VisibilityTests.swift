import HexKit
import Testing

import struct FoundationEssentials.Date

/// The visibility as kept in the database, and a visibility for a while ending by itself.
@Suite(.timeLimit(.minutes(5))) struct VisibilityTests {
    @Test func everyVisibilityIsReadBackAsKept() {
        let until = Date(timeIntervalSince1970: 1_795_521_600.25)
        for visibility in [Visibility.visible, .hidden, .visibleUntil(until)] {
            #expect(Visibility(stored: visibility.stored) == visibility)
        }
        for text in ["", "Visible", "visible-until:", "visible-until:x", "visible-until:nan", "visible-until:inf"] {
            #expect(Visibility(stored: text) == nil, "\(text)")
        }
    }

    @Test func aVisibilityForAWhileIsHiddenOnceItsTimeIsOver() {
        let now = Date(timeIntervalSince1970: 1_000)
        let later = Visibility.visibleUntil(now.addingTimeInterval(60))
        #expect(later.isVisible(at: now) && later.settled(at: now) == later)
        #expect(!later.isVisible(at: now.addingTimeInterval(60)))
        #expect(later.settled(at: now.addingTimeInterval(61)) == .hidden)
        #expect(Visibility.visible.isVisible(at: now) && !Visibility.hidden.isVisible(at: now))
    }
}
