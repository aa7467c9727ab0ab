import Foundation
import Storage
import Testing

/// The outbox on SQLite on disk.
@Suite struct OutboxTests {
    @Test func anAlertGoesBeforeMessagesQueuedEarlier() throws {
        let database = try RideGuardDatabase(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("rideguard-outbox-order-\(UUID().uuidString).sqlite").path)
        let outbox = database.outbox
        _ = try outbox.enqueue(recipient: "+33612345678", kind: "reply", body: "where answer", now: 1)
        _ = try outbox.enqueue(recipient: "+33612345678", kind: "location_update", body: "update", now: 2)
        _ = try outbox.enqueue(recipient: "+4915112345678", kind: "alert", body: "crash", now: 3)
        _ = try outbox.enqueue(recipient: "+33612345678", kind: "alert", body: "crash", now: 4)
        var order: [String] = []
        while let message = try outbox.claimNext(now: 10) { order.append("\(message.kind) \(message.recipient)") }
        #expect(order == ["alert +4915112345678", "alert +33612345678", "reply +33612345678", "location_update +33612345678"])
    }
}
