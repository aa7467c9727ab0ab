// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// Whether the contacts are being rung, and what `status` says of it. The workflow switches the
/// calls on once the alert SMS went out and off at an acknowledgement, the all-clear or the end of
/// tracking; `CallService` does the ringing.
final class CallSwitch: Sendable {
    private let continuation: AsyncStream<Bool>.Continuation
    let changes: AsyncStream<Bool>
    private let summary = Mutex<String?>(nil)
    /// The last switch (what the workflow wants now) and the task ringing.
    private let state = Mutex<(on: Bool, ringing: Task<Void, Never>?)>((false, nil))

    init() {
        (changes, continuation) = AsyncStream.makeStream(of: Bool.self)
    }

    /// Off cancels the ringing at once, before this returns: a call waiting for the modem (busy
    /// reading the contact's OK that stopped the calls) is never dialled.
    func set(_ on: Bool) {
        state.withLock { state in
            state.on = on
            if !on { state.ringing?.cancel() }
        }
        continuation.yield(on)
    }

    /// The task ringing the contacts now; cancelled at once when the calls were switched off since
    /// the "on" it answers (an OK read just after the alert went out: on, then off, both before
    /// the ringing began). It may never dial.
    func ring(_ task: Task<Void, Never>?) {
        state.withLock { state in
            state.ringing = task
            if !state.on { task?.cancel() }
        }
    }

    /// What the calls are doing, for `status`; nil before any emergency rang anybody.
    var status: String? { summary.withLock { $0 } }

    func say(_ text: String?) {
        summary.withLock { $0 = text }
    }
}
