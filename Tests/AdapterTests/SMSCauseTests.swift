// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
import SerialModem
import RideGuardTestSupport
import Testing
import SystemTime

/// Why an SMS did not go out, told apart from what the modem answers to AT+CMGS (27.005 §3.2.5:
/// +CMS ERROR 0–127 are the RP-causes of 24.011 Annex E, 128–255 the TP-FCS of 23.040, 300–500 the
/// modem's own) and what it reports to AT+CEER after it, in the words makers print for the
/// network's causes (Huawei's and Telit's manuals: one line of text; Quectel's M26: numbers only,
/// "+CEER: 0,0").
@Suite(.serialized) struct SMSCauseTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var code: Int
        var report: String?
        var cause: SMSCause
        var permanent: Bool
        var testDescription: String { "+CMS ERROR: \(code)" + (report.map { ", +CEER: \($0)" } ?? "") }
    }

    static let cases: [Case] = [
        // The contact's number.
        Case(code: 1, report: "Unassigned (unallocated) number", cause: .numberNotInService, permanent: true),
        Case(code: 195, report: nil, cause: .numberNotInService, permanent: true),
        Case(code: 196, report: nil, cause: .recipientBarred, permanent: true),
        // The rider's SIM: the message waits until it is put right, never given up (issue 61).
        Case(code: 50, report: "Requested facility not subscribed", cause: .notSubscribed, permanent: false),
        Case(code: 193, report: nil, cause: .notSubscribed, permanent: false),
        Case(code: 21, report: "Short message transfer rejected", cause: .refused, permanent: false),
        Case(code: 8, report: "Operator determined barring", cause: .simBarred, permanent: false),
        Case(code: 10, report: "Call barred", cause: .simBarred, permanent: false),
        Case(code: 30, report: "Unknown subscriber", cause: .simNotProvisioned, permanent: false),
        Case(code: 330, report: nil, cause: .serviceCentre, permanent: false),
        Case(code: 310, report: nil, cause: .sim, permanent: false),
        // The network, for now: retried.
        Case(code: 42, report: "Congestion", cause: .congestion, permanent: false),
        Case(code: 41, report: "Temporary failure", cause: .congestion, permanent: false),
        Case(code: 331, report: nil, cause: .noNetwork, permanent: false),
        // A code that says nothing: the report's words decide; numbers alone leave it unknown.
        Case(code: 500, report: "Requested facility not subscribed", cause: .notSubscribed, permanent: false),
        Case(code: 500, report: "0,0", cause: .other, permanent: false),
    ]

    @Test(arguments: cases)
    func eachFailureIsToldApartAndSaysWhatToDo(_ c: Case) async throws {
        var script = FakeModem.Script()
        script.outcomes = [.cmsError(c.code, report: c.report)]
        let fake = try FakeModem(script: script)
        var configuration = ModemConfiguration(device: fake.link)
        configuration.registrationTimeout = 20
        let modem = Modem(configuration: configuration, clock: SystemServiceClock(), logger: LogLines(level: .trace).logger) { _ in true }
        do {
            _ = try await modem.send("RideGuard TEST", to: "+33612345678")
            Issue.record("the send succeeded")
        } catch {
            #expect(error.cause == c.cause, "\(error.reason)")
            #expect(error.permanent == c.permanent, "\(error.reason)")
            #expect(error.reason.hasPrefix("+CMS ERROR: \(c.code) ("), "\(error.reason)")
            // The modem's own words are told beside the code, unless they say nothing a person reads.
            if let report = c.report, report.contains(where: \.isLetter) {
                #expect(error.reason.hasSuffix("; the modem's report: \(report)"), "\(error.reason)")
            } else {
                #expect(!error.reason.contains("the modem's report"), "\(error.reason)")
            }
            #expect(!c.cause.advice.isEmpty)
        }
        #expect(fake.commands.contains("AT+CEER"), "the modem was not asked for its report: \(fake.commands)")
        // The modem goes on: the next message is sent.
        #expect(try await modem.send("again", to: "+33612345678").count == 1)
        await modem.close()
    }

    /// What the outbox keeps of a failure names its cause again (`doctor` reads it from there).
    @Test func theKeptReasonNamesTheCauseAgain() {
        for c in Self.cases {
            let failure = SendFailure.classify(.cmsError(c.code), report: c.report)
            #expect(SMSCause(reason: failure.reason) == c.cause, "\(failure.reason)")
        }
        #expect(SMSCause(reason: "ATD: modem disconnected: EOF") == nil)
    }
}
