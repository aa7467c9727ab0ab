// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage
import Synchronization
import SystemCalls

/// Rings the contacts in order once the alert SMS went out: each call rings `calls.ring_s` and is
/// hung up; nobody answering moves on to the next contact, and after the last the round repeats
/// `calls.interval_s` after it began, `calls.rounds` times at most. A call answered after it rang
/// is the contact's acknowledgement, posted to the workflow, which then stops the calls (as it
/// does for an OK by SMS, the rider's all-clear, and the end of tracking). The modem takes one
/// command at a time, so a message waiting to be sent goes between a call's commands.
struct CallService: Service, CustomStringConvertible {
    let calls: CallSwitch
    let caller: any VoiceCaller
    let settings: AgentConfiguration.Calls
    let database: RideGuardDatabase
    let emergency: EmergencyService
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "calls" }

    func run() async throws {
        var ringing: Task<Void, Never>?
        for await on in calls.changes.cancelOnGracefulShutdown() {
            if let ringing {
                ringing.cancel()
                await ringing.value        // hung up before anything else
            }
            ringing = nil
            guard on else { continue }
            guard settings.enabled != false else {
                calls.say("off (calls.enabled is false)")
                continue
            }
            ringing = Task { await ringContacts() }
            calls.ring(ringing)
        }
        ringing?.cancel()
        await ringing?.value
    }

    private func ringContacts() async {
        if await caller.canCall == false { return noVoice() }
        // A database that fails is never "no contacts": the contacts read last are rung; never read,
        // it is said, and read again (1 s doubling to 30 s).
        var contacts: [Contact] = []
        var backoff = Backoff(first: 1, limit: 30)
        while true {
            do {
                contacts = try database.contactsToAlert()
                break
            } catch {
                let delay = backoff.next()
                logger.error("calls: the contacts cannot be read (\(error)); trying again in \(Int(delay)) s")
                journal("calls: the contacts cannot be read (\(error)); trying again in \(Int(delay)) s")
                calls.say("waiting: the contacts cannot be read")
                do { try await clock.sleep(until: clock.now() + delay) } catch { return stopped() }
            }
        }
        guard !contacts.isEmpty else { return }
        let rounds = settings.rounds
        for round in 1...rounds {
            let started = clock.now()
            for contact in contacts {
                guard !Task.isCancelled else { return stopped() }
                let who = contact.forLogs
                calls.say("round \(round) of \(rounds): ringing \(who)")
                logger.info("calls: round \(round) of \(rounds): ringing \(who)")
                let report = await caller.call(contact.number, ringSeconds: settings.ringSeconds)
                // What the call cost the AT port (nothing for the simulated modem).
                let port = report.commands == 0 ? ""
                    : " (AT port held \(Int((report.portSeconds * 1000).rounded())) ms by \(report.commands) commands)"
                switch report.outcome {
                case .answered:
                    journal("call to \(who): answered\(port)")
                    calls.say("answered by \(who)")
                    emergency.post(.event(.acknowledged(Acknowledgement(who: who, channel: .call, time: clock.now()))))
                    return
                case .notAnswered(let why):
                    journal("call to \(who): \(why)\(port)")
                case .failed(let why):
                    journal("call to \(who) not placed: \(why)")
                case .noVoice:
                    return noVoice()
                case .stopped:
                    return stopped()
                }
                guard !Task.isCancelled else { return stopped() }
            }
            guard round < rounds else { break }
            let next = started + settings.intervalSeconds
            let wait = Int(max(0, next - clock.now()).rounded())
            journal("calls: nobody answered round \(round) of \(rounds); the next \(wait < 120 ? "in \(wait) s" : "in \(wait / 60) min")")
            calls.say("round \(round) of \(rounds) unanswered; the next in \(wait) s")
            do { try await clock.sleep(until: next) } catch { return stopped() }
        }
        journal("calls: nobody answered in \(rounds) round\(rounds == 1 ? "" : "s"); no more calls (the SMS updates go on)")
        calls.say("over: nobody answered \(rounds) round\(rounds == 1 ? "" : "s")")
    }

    private func noVoice() {
        journal("calls: the modem cannot make voice calls; the contacts have the SMS only")
        calls.say("off (the modem cannot make voice calls)")
    }

    private func stopped() {
        calls.say("stopped")
        logger.info("calls stopped")
    }

    private func journal(_ text: String) {
        database.journal(JournalEntry(.alerts, text), at: clock.now())
        logger.info("\(text)")
    }
}
