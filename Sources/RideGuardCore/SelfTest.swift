// SPDX-License-Identifier: Apache-2.0
/// The SMS path proven on a schedule: a short report to the rider's own phone every
/// `messages.self_test_days` (30 by default), and when the rider asks. Never during an emergency,
/// never two in a day, never a second while one waits to go.
package enum SelfTestSchedule {
    package static let day = 86_400.0

    /// Whether the scheduled test is due: `days` since the last one went out (or since the agent
    /// first ran, before any), and a day since the last one was queued (one that failed is tried
    /// again the next day, not in a loop).
    package static func isDue(now: Double, days: Int, firstRun: Double, lastSent: Double?, lastQueued: Double?) -> Bool {
        guard days > 0 else { return false }
        // A time more than a day ahead was written by a wrong clock (a Pi without a real-time clock
        // before NTP set it, or one set ahead): it counts as never, so a test is not put off for years.
        func past(_ t: Double?) -> Double? { t.flatMap { $0 > now + day ? nil : $0 } }
        let since = past(lastSent) ?? past(firstRun) ?? -.infinity
        return now - since >= Double(days) * day && (past(lastQueued).map { now - $0 >= day } ?? true)
    }

    /// Why no test may go now, or nil: during an emergency, while one waits, or within a day of
    /// the last one that went out. `time` formats a moment for the rider ("14:05").
    package static func refusal(now: Double, emergency: Bool, waiting: Bool, lastSent: Double?, time: (Double) -> String) -> String? {
        if emergency { return "not during an emergency" }
        if waiting { return "a self-test SMS is already waiting to be sent" }
        if let lastSent, lastSent <= now + day, now - lastSent < day { return "one went out at \(time(lastSent)), less than a day ago: at most one a day" }
        return nil
    }
}

/// What the self-test SMS tells the rider.
package struct SelfTestReport: Equatable, Sendable {
    package var protection: Protection
    package var contacts: Int
    package var confirmed: Int
    /// The registration and the signal: "home, -71 dBm", "searching"…; nil with a simulated modem.
    package var modem: String?
    /// Seconds since the last fix; nil without one.
    package var fixAge: Double?
    /// Samples a second; nil when the IMU sends none.
    package var sensorRateHz: Double?
    /// When the last crash was detected; nil when none ever was.
    package var lastCrash: Double?

    package init(protection: Protection, contacts: Int, confirmed: Int, modem: String?, fixAge: Double?, sensorRateHz: Double?, lastCrash: Double?) {
        self.protection = protection
        self.contacts = contacts
        self.confirmed = confirmed
        self.modem = modem
        self.fixAge = fixAge
        self.sensorRateHz = sensorRateHz
        self.lastCrash = lastCrash
    }
}

extension MessageComposer {
    /// The self-test SMS, to the rider's own phone. `crashDate` formats the last crash's time for
    /// the rider ("2026-11-02").
    package static func selfTest(_ r: SelfTestReport, language: MessageLanguage, crashDate: (Double) -> String) -> String {
        let words = SelfTestWords.for(language)
        // The reasons are the agent's own words (English), as `status` and the journal say them:
        // as many whole words of them as keep the report within its parts, never a word cut.
        let reasons = r.protection.reasons.joined(separator: "; ")
        let all = reasons.split(separator: " ")
        var kept = all.count
        while true {
            let told = kept == all.count ? reasons : String(all.prefix(kept).joined(separator: " ").reversed().drop { ";:,.".contains($0) }.reversed()) + "..."
            let text = spelledOrFolded(selfTest(r, words, reasons: told, crashDate: crashDate), partsAllowed: PartsAllowed.selfTest) {
                selfTest(r, words.folded, reasons: told, crashDate: crashDate)
            }
            if kept == 0 || SMSText(text).parts.count <= PartsAllowed.selfTest { return text }
            kept -= 1
        }
    }

    private static func selfTest(_ r: SelfTestReport, _ w: SelfTestWords, reasons: String, crashDate: (Double) -> String) -> String {
        let fix = r.fixAge.map { w.fixAge(Ago.text($0)) } ?? w.noFix
        let sensor = r.sensorRateHz.map { "\(w.sensor) \(Int($0.rounded())) Hz" } ?? w.sensorSilent
        let crash = r.lastCrash.map { "\(w.lastCrash) \(crashDate($0))" } ?? w.noCrash
        let level = switch r.protection.level {
        case .protecting, .emergency: w.protecting
        case .degraded: w.degraded
        case .notProtecting: w.notProtecting
        }
        let protection = level + (reasons.isEmpty || reasons == "..." ? "" : ": " + reasons)
        return "RideGuard \(w.title): \(protection). \(w.contacts) \(r.confirmed)/\(r.contacts). SIM: \(r.modem ?? w.simulated). "
            + "\(fix). \(sensor). \(crash). \(w.noReply)"
    }
}

/// The self-test's words, by language, spelled right (folded as the other messages' when they must be).
struct SelfTestWords {
    var title: String
    var protecting: String
    var degraded: String
    var notProtecting: String
    /// Before "2/3": how many contacts confirmed.
    var contacts: String
    var simulated: String
    var fixAge: (String) -> String
    var noFix: String
    var sensor: String
    var sensorSilent: String
    var lastCrash: String
    var noCrash: String
    var noReply: String

    var folded: SelfTestWords {
        let f = GSM7.folded, fixAge = self.fixAge
        return SelfTestWords(title: f(title), protecting: f(protecting), degraded: f(degraded), notProtecting: f(notProtecting),
                             contacts: f(contacts), simulated: f(simulated), fixAge: { f(fixAge($0)) }, noFix: f(noFix), sensor: f(sensor),
                             sensorSilent: f(sensorSilent), lastCrash: f(lastCrash), noCrash: f(noCrash), noReply: f(noReply))
    }

    static func `for`(_ language: MessageLanguage) -> SelfTestWords {
        switch language {
        case .en:
            SelfTestWords(title: "test", protecting: "protecting", degraded: "protecting, degraded", notProtecting: "NOT protecting",
                          contacts: "Contacts confirmed:", simulated: "simulated modem", fixAge: { "GPS fix \($0) ago" },
                          noFix: "No GPS fix", sensor: "Sensor", sensorSilent: "Sensor silent", lastCrash: "Last crash",
                          noCrash: "No crash detected", noReply: "No reply needed.")
        case .fr:
            SelfTestWords(title: "test", protecting: "protection active", degraded: "protection dégradée", notProtecting: "PAS de protection",
                          contacts: "Contacts confirmés :", simulated: "modem simulé", fixAge: { "GPS il y a \($0)" },
                          noFix: "Pas de GPS", sensor: "Capteur", sensorSilent: "Capteur muet", lastCrash: "Dernière chute",
                          noCrash: "Aucune chute détectée", noReply: "Inutile de répondre.")
        case .de:
            SelfTestWords(title: "Test", protecting: "Schutz aktiv", degraded: "Schutz eingeschränkt", notProtecting: "KEIN Schutz",
                          contacts: "Kontakte bestätigt:", simulated: "simuliertes Modem", fixAge: { "GPS vor \($0)" },
                          noFix: "Kein GPS", sensor: "Sensor", sensorSilent: "Sensor stumm", lastCrash: "Letzter Sturz",
                          noCrash: "Kein Sturz erkannt", noReply: "Keine Antwort nötig.")
        case .es:
            SelfTestWords(title: "prueba", protecting: "vigilancia activa", degraded: "vigilancia limitada", notProtecting: "SIN vigilancia",
                          contacts: "Contactos confirmados:", simulated: "simulador", fixAge: { "GPS hace \($0)" },
                          noFix: "Sin GPS", sensor: "Sensor", sensorSilent: "Sensor mudo", lastCrash: "Accidente anterior",
                          noCrash: "Sin accidentes detectados", noReply: "No responda.")
        case .it:
            SelfTestWords(title: "test", protecting: "protezione attiva", degraded: "protezione ridotta", notProtecting: "NESSUNA protezione",
                          contacts: "Contatti confermati:", simulated: "modem simulato", fixAge: { "GPS \($0) fa" },
                          noFix: "Niente GPS", sensor: "Sensore", sensorSilent: "Sensore muto", lastCrash: "Ultima caduta",
                          noCrash: "Nessuna caduta rilevata", noReply: "Non serve rispondere.")
        }
    }
}
