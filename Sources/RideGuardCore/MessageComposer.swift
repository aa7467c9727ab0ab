// SPDX-License-Identifier: Apache-2.0
/// A position from GPS, as the messages use it.
package struct Fix: Codable, Equatable, Sendable {
    /// Seconds since the epoch (UTC).
    package var time: Double
    package var latitude: Double
    package var longitude: Double
    package var altitude: Double?
    /// Ground speed, m/s.
    package var speed: Double?
    /// Course over ground, degrees clockwise from north.
    package var track: Double?
    /// Horizontal accuracy (95%), metres.
    package var accuracy: Double?

    package init(time: Double, latitude: Double, longitude: Double, altitude: Double? = nil, speed: Double? = nil,
                track: Double? = nil, accuracy: Double? = nil) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.track = track
        self.accuracy = accuracy
    }
}

package enum MessageLanguage: String, Codable, CaseIterable, Sendable {
    case en, fr, de, es, it

    /// Its name in itself, as the page's picker shows it.
    package var name: String {
        switch self {
        case .en: "English"
        case .fr: "Français"
        case .de: "Deutsch"
        case .es: "Español"
        case .it: "Italiano"
        }
    }

    /// The first words of an SMS that its speakers write to ask where the rider is, to say yes, to
    /// decline, and (the rider) to ask the state: upper case, without accents. Every language's are
    /// read whatever the rider's (a contact may speak another). "No" is read apart (`SMSCommand`).
    package var replyWords: (whereAreYou: [String], yes: [String], stop: [String], status: [String]) {
        switch self {
        case .en: (["WHERE"], ["OK", "OKAY", "YES"], ["STOP"], ["STATUS"])
        case .fr: (["OU"], ["OUI"], ["ARRET", "NON"], ["ETAT"])
        case .de: (["WO"], ["JA"], ["STOPP", "NEIN"], ["STATUS"])
        case .es: (["DONDE"], ["SI", "VALE"], ["BAJA"], ["ESTADO"])
        case .it: (["DOVE"], ["SI", "CERTO"], ["STOP"], ["STATO"])
        }
    }
}

package enum MapLinkStyle: String, Codable, CaseIterable, Sendable {
    case google, openstreetmap, geo

    package func link(_ fix: Fix) -> String {
        let lat = DecimalFormat.string(fix.latitude, decimals: 5), lon = DecimalFormat.string(fix.longitude, decimals: 5)
        switch self {
        case .google: return "https://maps.google.com/?q=\(lat),\(lon)"
        case .openstreetmap: return "https://osm.org/?mlat=\(lat)&mlon=\(lon)&zoom=17"
        case .geo: return "geo:\(lat),\(lon)"
        }
    }
}

/// Everything a message may say. Times are preformatted by the agent in the rider's time zone.
package struct MessageContext: Sendable {
    package var riderName: String
    /// The rider's own words, first in every alert.
    package var riderMessage: String
    package var medicalNote: String?
    package var language: MessageLanguage
    package var mapLink: MapLinkStyle
    package var trigger: EmergencyWorkflow.Trigger
    /// "14:32", local time of the crash.
    package var crashTime: String?
    package var evidence: CrashEvidence?
    package var fix: Fix?
    /// Seconds since the fix, when the message is written.
    package var fixAge: Double?
    /// Speed and heading just before the crash, from the recent track.
    package var speedBefore: Double?
    package var headingBefore: Double?

    package init(riderName: String, riderMessage: String, medicalNote: String? = nil, language: MessageLanguage = .en,
                mapLink: MapLinkStyle = .google, trigger: EmergencyWorkflow.Trigger = .crash, crashTime: String? = nil,
                evidence: CrashEvidence? = nil, fix: Fix? = nil, fixAge: Double? = nil, speedBefore: Double? = nil,
                headingBefore: Double? = nil) {
        self.riderName = riderName
        self.riderMessage = riderMessage
        self.medicalNote = medicalNote
        self.language = language
        self.mapLink = mapLink
        self.trigger = trigger
        self.crashTime = crashTime
        self.evidence = evidence
        self.fix = fix
        self.fixAge = fixAge
        self.speedBefore = speedBefore
        self.headingBefore = headingBefore
    }
}

/// The texts of the alert, the location updates and the all-clear, in five languages, each with its
/// language's own spelling. The GSM 7-bit alphabet carries German's and Italian's letters and most of
/// French's and Spanish's (é è à ù ì ò ñ Ç, not ê â î ô û ç á í ó ú). A message that holds one of
/// those goes in UCS-2 (70 characters a part instead of 160) when it still fits the parts allowed
/// for it (`partsAllowed`); otherwise those letters of RideGuard's own words, and only those, take
/// the nearest letter of the alphabet (ê→e, á→a). The rider's own words and names are never changed:
/// when they need UCS-2 the message goes in UCS-2 whatever its length, and ours keep their spelling.
package enum MessageComposer {
    /// How many SMS parts each message may take in UCS-2 to keep its spelling: the alert three (one
    /// more than its usual two in GSM 7-bit: the one message a family must trust at a glance), the
    /// monthly test two, every other message one.
    package enum PartsAllowed {
        package static let alert = 3
        package static let selfTest = 2
        package static let other = 1
    }

    /// The text `build` writes with the language's words, spelled right, or with those words folded
    /// to the GSM 7-bit alphabet when spelling them right would take more than `partsAllowed` parts.
    static func written(_ language: MessageLanguage, partsAllowed: Int = PartsAllowed.other, _ build: (Words) -> String) -> String {
        let words = Words.for(language)
        return spelledOrFolded(build(words), partsAllowed: partsAllowed) { build(words.folded) }
    }

    static func spelledOrFolded(_ spelled: String, partsAllowed: Int, folded: () -> String) -> String {
        let text = SMSText(spelled)
        guard text.encoding == .ucs2, text.parts.count > partsAllowed else { return spelled }
        let other = folded()
        // The rider's own words need UCS-2 anyway: ours keep their spelling.
        return SMSText(other).encoding == .gsm7 ? other : spelled
    }

    /// A fix older than this is called out with its age, seconds.
    package static let freshFix = 60.0

    /// The rider's message must say something: at least 5 characters after trimming.
    package static func validateRiderMessage(_ text: String) throws(ConfigurationError) {
        guard text.trimmingSpaces().count >= 5 else {
            throw ConfigurationError(key: "message", reason: ScreenText(.en)(.messageTooShort))
        }
    }

    package static func alert(_ c: MessageContext) -> String {
        written(c.language, partsAllowed: PartsAllowed.alert) { w in alert(c, w) }
    }

    private static func alert(_ c: MessageContext, _ w: Words) -> String {
        var lines = [c.riderMessage.trimmingSpaces().description]
        lines.append(position(c, w))
        var facts: [String] = []
        if let time = c.crashTime { facts.append((c.trigger == .manual ? w.sosAt : w.crashAt) + " " + time) }
        if let speed = c.speedBefore, speed >= 2 {
            var moving = "\(w.moving) \(Int((speed * 3.6).rounded())) km/h"
            if let heading = c.headingBefore { moving += " \(w.heading) \(w.compass[compassIndex(heading)])" }
            facts.append(moving)
        }
        if let e = c.evidence {
            if e.postureDegrees >= 135 { facts.append(w.upsideDown) }
            else if e.postureDegrees >= 45 { facts.append(w.onItsSide) }
            else if e.reason == .collisionThenStill { facts.append(w.collision) }
            if e.peakG >= 2 { facts.append("\(w.impact) \(DecimalFormat.string(e.peakG, decimals: 1)) g") }
        }
        if !facts.isEmpty { lines.append(facts.joined(separator: ", ")) }
        if let note = c.medicalNote?.trimmingSpaces(), !note.isEmpty { lines.append("\(w.medical): \(note)") }
        lines.append("RideGuard - \(c.riderName)")
        return lines.joined(separator: "\n")
    }

    package static func locationUpdate(_ c: MessageContext) -> String {
        written(c.language) { w in "RideGuard - \(c.riderName): \(w.update)\n" + position(c, w) }
    }

    /// `byRider`: the rider cancelled after the alert (else the alert is withdrawn as false).
    package static func allClear(_ c: MessageContext, byRider: Bool = true) -> String {
        written(c.language) { w in "RideGuard - \(c.riderName): " + (byRider ? w.cancelledByRider : w.falseAlarm) }
    }

    /// The answer to a contact's WHERE: what the agent is doing, and the latest position.
    package static func whereReply(_ c: MessageContext, state: WorkflowState, protection: Protection.Level) -> String {
        written(c.language) { w in "RideGuard - \(c.riderName): \(w.doing(state, protection))\n" + position(c, w) }
    }

    /// The answer to the rider's own STATUS: what the agent is doing, whether the IMU sends
    /// samples, what waits in the outbox, and the latest position.
    package static func statusReply(_ c: MessageContext, state: WorkflowState, protection: Protection.Level, sensorRateHz: Double?,
                                    waiting: Int) -> String {
        written(c.language) { w in
            let sensor = sensorRateHz.map { "\(w.sensorWorking), \(Int($0.rounded())) Hz" } ?? w.sensorSilent
            return "RideGuard - \(c.riderName): \(w.doing(state, protection))\n\(sensor); \(w.waiting(waiting))\n" + position(c, w)
        }
    }

    /// To the rider's own phone, never a contact: the parked bike fell over, and where it is.
    package static func parkedFall(_ c: MessageContext) -> String {
        written(c.language) { w in "RideGuard - \(c.riderName): \(w.parkedFall)\n" + position(c, w) }
    }

    /// To a contact just added (or asked again): who added them, what they will get and when, and
    /// how to answer. `riderName`: nil before the rider gave theirs.
    package static func confirmationRequest(riderName: String?, language: MessageLanguage) -> String {
        written(language) { w in "RideGuard: " + w.confirmation(riderName ?? w.someRider) }
    }

    /// The language a contact's question was written in (its words after the rider's name, spelled
    /// or folded); nil for a text that is none of them.
    package static func confirmationLanguage(of body: String) -> MessageLanguage? {
        MessageLanguage.allCases.first { language in
            [Words.for(language), Words.for(language).folded].contains { body.hasSuffix($0.confirmation("").drop { $0 != " " }) }
        }
    }

    /// The answer, once, to a contact's reply that neither confirms nor declines: the words that do.
    package static func replyHint(riderName: String?, language: MessageLanguage) -> String {
        written(language) { w in "RideGuard: " + w.replyHint(riderName ?? w.someRider) }
    }

    /// The test SMS `rideguard setup` offers to send, plainly marked as a test.
    package static func test(riderName: String, language: MessageLanguage) -> String {
        written(language) { w in "RideGuard TEST - \(riderName): " + w.testNotice }
    }

    /// A first alert message `rideguard setup` proposes; the rider's own words replace it.
    /// The answer to the rider's PAIR: the one-time link to the web page.
    package static func pairing(link: String, language: MessageLanguage) -> String {
        written(language) { w in "RideGuard: " + w.pairing + " " + link }
    }

    /// Spelled right: it becomes the rider's own words, which are never folded (so it goes in UCS-2
    /// where its language needs a letter GSM lacks).
    package static func suggestedMessage(_ language: MessageLanguage) -> String {
        Words.for(language).suggestedMessage
    }

    private static func position(_ c: MessageContext, _ w: Words) -> String {
        guard let fix = c.fix else { return w.positionUnknown }
        var text = c.mapLink.link(fix)
        var details: [String] = []
        if let accuracy = fix.accuracy, accuracy.isFinite { details.append("\(w.accuracy) \(Int(accuracy.rounded())) m") }
        if let age = c.fixAge, age > freshFix {
            let minutes = Int((age / 60).rounded())
            details.append(minutes >= 1 ? w.ageMinutes(minutes) : w.ageMinutes(1))
        }
        if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
        return text
    }

    static func compassIndex(_ degrees: Double) -> Int {
        let normalized = (degrees.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360)
        return Int((normalized / 45).rounded()) % 8
    }
}

/// One language's words, spelled as the language spells them (a test checks every template's
/// alphabet and parts).
struct Words {
    var positionUnknown: String
    var accuracy: String
    var ageMinutes: (Int) -> String
    var crashAt: String
    var sosAt: String
    var moving: String
    var heading: String
    var compass: [String]
    var onItsSide: String
    var upsideDown: String
    var collision: String
    var impact: String
    var medical: String
    var update: String
    var cancelledByRider: String
    var falseAlarm: String
    var testNotice: String
    /// Asking a contact to confirm, with the rider's name.
    var confirmation: (String) -> String
    /// Who added the contact, before the rider gave their name.
    var someRider: String
    /// The answer, once, to a contact's reply that neither confirms nor declines: the words that
    /// do, in every language RideGuard reads, with the rider's name.
    var replyHint: (String) -> String
    /// The answer to the rider's PAIR: what to do with the link that follows.
    var pairing: String
    var suggestedMessage: String
    var stateProtecting: String
    var stateCountdown: String
    var stateEmergency: String
    var stateNotProtecting: String
    var sensorWorking: String
    var sensorSilent: String
    var waiting: (Int) -> String
    var parkedFall: String

    /// The same words with each letter GSM 7-bit lacks replaced by its nearest (the rider's name,
    /// put into the confirmation, is not).
    var folded: Words {
        let f = GSM7.folded
        let confirmation = self.confirmation, ageMinutes = self.ageMinutes, waiting = self.waiting
        let template = f(confirmation("\u{1}")), hint = f(replyHint("\u{1}"))
        return Words(positionUnknown: f(positionUnknown), accuracy: f(accuracy), ageMinutes: { f(ageMinutes($0)) },
                     crashAt: f(crashAt), sosAt: f(sosAt), moving: f(moving), heading: f(heading), compass: compass.map(f),
                     onItsSide: f(onItsSide), upsideDown: f(upsideDown), collision: f(collision), impact: f(impact),
                     medical: f(medical), update: f(update), cancelledByRider: f(cancelledByRider), falseAlarm: f(falseAlarm),
                     testNotice: f(testNotice), confirmation: { template.replacing("\u{1}", with: $0) }, someRider: f(someRider),
                     replyHint: { hint.replacing("\u{1}", with: $0) },
                     pairing: f(pairing), suggestedMessage: suggestedMessage, stateProtecting: f(stateProtecting),
                     stateCountdown: f(stateCountdown), stateEmergency: f(stateEmergency), stateNotProtecting: f(stateNotProtecting),
                     sensorWorking: f(sensorWorking), sensorSilent: f(sensorSilent), waiting: { f(waiting($0)) }, parkedFall: f(parkedFall))
    }

    /// What the agent is doing, as the workflow's protection says it (armed is not protecting
    /// while the IMU is blind or the modem does not answer).
    func doing(_ state: WorkflowState, _ protection: Protection.Level) -> String {
        switch state {
        case .armed: protection == .notProtecting ? stateNotProtecting : stateProtecting
        case .alertCountdown: stateCountdown
        case .emergencySending, .emergencySent, .emergencySendingFailed: stateEmergency
        case .disarmed, .emergencyEnded: stateNotProtecting
        }
    }

    static func `for`(_ language: MessageLanguage) -> Words {
        switch language {
        case .en:
            Words(positionUnknown: "Position unknown (no GPS fix).", accuracy: "accuracy",
                  ageMinutes: { "position \($0) min old" }, crashAt: "Crash at", sosAt: "SOS raised by the rider at", moving: "moving",
                  heading: "heading", compass: ["N", "NE", "E", "SE", "S", "SW", "W", "NW"], onItsSide: "bike on its side",
                  upsideDown: "bike upside down", collision: "collision", impact: "impact", medical: "Medical",
                  update: "position update", cancelledByRider: "the rider cancelled the alert. False alarm, rider OK.",
                  falseAlarm: "false alarm, rider OK.",
                  testNotice: "nothing happened. You are an emergency contact: if RideGuard detects a crash, you get an SMS like this with the position.",
                  confirmation: { "\($0) made you an emergency contact. After a crash you get an SMS with the position. Reply OK to confirm, STOP to decline." },
                  someRider: "A motorcyclist",
                  replyHint: { "\($0) asked you to be an emergency contact. To confirm, reply OK (or YES, OUI, JA, SI); to decline, STOP (or NO, NON, NEIN)." },
                  pairing: "open this on this phone, on the bike's Wi-Fi, within 10 minutes (it works once):",
                  suggestedMessage: "I may have crashed on my motorbike. Please call me, and call the emergency services if I do not answer.", stateProtecting: "protecting the rider", stateCountdown: "crash detected, countdown running",
                  stateEmergency: "emergency: contacts alerted", stateNotProtecting: "not protecting",
                  sensorWorking: "IMU OK", sensorSilent: "IMU silent: blind", waiting: { "SMS waiting: \($0)" },
                  parkedFall: "your parked bike fell over. Nobody was riding it: your contacts were not told.")
        case .fr:
            Words(positionUnknown: "Position inconnue (pas de GPS).", accuracy: "précision",
                  ageMinutes: { "position d'il y a \($0) min" }, crashAt: "Chute à", sosAt: "SOS lancé par le motard à", moving: "roulait à",
                  heading: "direction", compass: ["N", "NE", "E", "SE", "S", "SO", "O", "NO"], onItsSide: "moto couchée",
                  upsideDown: "moto retournée", collision: "collision", impact: "choc", medical: "Médical",
                  update: "nouvelle position", cancelledByRider: "le motard a annulé l'alerte. Fausse alerte, tout va bien.",
                  falseAlarm: "fausse alerte, tout va bien.",
                  testNotice: "rien ne s'est passé. Contact d'urgence, vous recevrez en cas de chute un SMS comme celui-ci avec la position.",
                  confirmation: { "\($0) vous a choisi comme contact d'urgence. En cas de chute, SMS avec la position. Répondez OK pour confirmer, STOP pour refuser." },
                  someRider: "Un motard",
                  replyHint: { "\($0) vous demande d'être contact d'urgence. Répondez OK (ou OUI, YES, JA, SI) pour confirmer, STOP (ou NON, NEIN) pour refuser." },
                  pairing: "ouvrez ce lien sur ce téléphone, sur le Wi-Fi de la moto, dans les 10 minutes (une seule fois) :",
                  suggestedMessage: "Il se peut que j'aie chuté à moto. Appelez-moi, et appelez le 112 si je ne réponds pas.", stateProtecting: "protection active", stateCountdown: "chute détectée, compte à rebours en cours",
                  stateEmergency: "urgence : contacts alertés", stateNotProtecting: "protection inactive",
                  sensorWorking: "capteur OK", sensorSilent: "capteur muet", waiting: { "\($0) SMS en attente" },
                  parkedFall: "votre moto garée est tombée. Personne ne la conduisait : vos contacts ne sont pas prévenus.")
        case .de:
            Words(positionUnknown: "Position unbekannt (kein GPS).", accuracy: "Genauigkeit",
                  ageMinutes: { "Position vor \($0) Min." }, crashAt: "Sturz um", sosAt: "SOS vom Fahrer ausgelöst um", moving: "fuhr",
                  heading: "Richtung", compass: ["N", "NO", "O", "SO", "S", "SW", "W", "NW"], onItsSide: "Motorrad liegt",
                  upsideDown: "Motorrad auf dem Kopf", collision: "Kollision", impact: "Aufprall", medical: "Medizinisch",
                  update: "neue Position", cancelledByRider: "Alarm vom Fahrer aufgehoben. Fehlalarm, alles in Ordnung.",
                  falseAlarm: "Fehlalarm, alles in Ordnung.",
                  testNotice: "nichts ist passiert. Sie sind Notfallkontakt: erkennt RideGuard einen Sturz, bekommen Sie eine SMS wie diese mit der Position.",
                  confirmation: { "\($0) hat Sie als Notfallkontakt gewählt. Bei einem Sturz: SMS mit Position. Antworten Sie OK zum Bestätigen, STOP zum Ablehnen." },
                  someRider: "Ein Motorradfahrer",
                  replyHint: { "\($0) bittet Sie, Notfallkontakt zu sein. Antworten Sie OK (oder JA, YES, OUI, SI) zum Bestätigen, STOP (oder NEIN, NON) zum Ablehnen." },
                  pairing: "öffnen Sie diesen Link auf diesem Telefon im WLAN des Motorrads, innerhalb von 10 Minuten (nur einmal):",
                  suggestedMessage: "Ich hatte vielleicht einen Motorradunfall. Bitte ruf mich an, und ruf den Notruf 112, wenn ich nicht antworte.", stateProtecting: "Schutz aktiv", stateCountdown: "Sturz erkannt, Countdown läuft",
                  stateEmergency: "Notfall: Kontakte alarmiert", stateNotProtecting: "Schutz aus",
                  sensorWorking: "Sensor OK", sensorSilent: "Sensor stumm: blind", waiting: { "SMS wartend: \($0)" },
                  parkedFall: "Ihr geparktes Motorrad ist umgefallen. Niemand fuhr: Ihre Kontakte wurden nicht benachrichtigt.")
        case .es:
            Words(positionUnknown: "Lugar desconocido (sin GPS).", accuracy: "margen",
                  ageMinutes: { "dato de hace \($0) min" }, crashAt: "Accidente a las", sosAt: "SOS lanzado por el motorista a las", moving: "iba a",
                  heading: "rumbo", compass: ["N", "NE", "E", "SE", "S", "SO", "O", "NO"], onItsSide: "moto tumbada",
                  upsideDown: "moto volcada", collision: "choque", impact: "impacto", medical: "Datos médicos",
                  update: "nuevo punto en el mapa", cancelledByRider: "el motorista ha cancelado la alerta. Falsa alarma, todo bien.",
                  falseAlarm: "falsa alarma, todo bien.",
                  testNotice: "no ha pasado nada. Es contacto de emergencia: si RideGuard detecta un accidente, le llega un SMS como este con el lugar en el mapa.",
                  confirmation: { "\($0) le ha elegido como contacto de emergencia. Si se cae, recibe un SMS con el lugar. OK para confirmar, STOP para rechazar." },
                  someRider: "Un motorista",
                  replyHint: { "\($0) le pide ser contacto de emergencia. Para confirmar, responda OK (o SI, YES, OUI, JA); para rechazar, STOP (o NO, NON, NEIN)." },
                  pairing: "abra este enlace en este teléfono, en el Wi-Fi de la moto, antes de 10 minutos (una sola vez):",
                  suggestedMessage: "Puede que haya tenido un accidente de moto. Llame a este teléfono, y al 112 si no contesto.", stateProtecting: "vigilancia activa", stateCountdown: "accidente detectado, cuenta regresiva en curso",
                  stateEmergency: "emergencia: contactos avisados", stateNotProtecting: "vigilancia desactivada",
                  sensorWorking: "sensor OK", sensorSilent: "sensor mudo: ciego", waiting: { "SMS pendientes: \($0)" },
                  parkedFall: "su moto aparcada ha volcado. Nadie la llevaba: sus contactos no han sido avisados.")
        case .it:
            Words(positionUnknown: "Posizione sconosciuta (niente GPS).", accuracy: "precisione",
                  ageMinutes: { "posizione di \($0) min fa" }, crashAt: "Caduta alle", sosAt: "SOS lanciato dal motociclista alle", moving: "andava a",
                  heading: "direzione", compass: ["N", "NE", "E", "SE", "S", "SO", "O", "NO"], onItsSide: "moto a terra",
                  upsideDown: "moto capovolta", collision: "urto", impact: "impatto", medical: "Dati medici",
                  update: "nuova posizione", cancelledByRider: "il motociclista ha annullato l'allarme. Falso allarme, tutto ok.",
                  falseAlarm: "falso allarme, tutto ok.",
                  testNotice: "non è successo niente. Sei un contatto di emergenza: se RideGuard rileva una caduta riceverai un SMS come questo con la posizione.",
                  confirmation: { "\($0) ti ha scelto come contatto di emergenza. Se cade, ricevi un SMS con la posizione. OK per confermare, STOP per rifiutare." },
                  someRider: "Un motociclista",
                  replyHint: { "\($0) ti chiede di essere contatto di emergenza. Rispondi OK (o SI, YES, OUI, JA) per confermare, STOP (o NO, NEIN) per rifiutare." },
                  pairing: "apri questo link su questo telefono, sul Wi-Fi della moto, entro 10 minuti (una sola volta):",
                  suggestedMessage: "Potrei essere caduto in moto. Chiamami, e chiama il 112 se non rispondo.", stateProtecting: "protezione attiva", stateCountdown: "caduta rilevata, conto alla rovescia in corso",
                  stateEmergency: "emergenza: contatti avvisati", stateNotProtecting: "protezione disattivata",
                  sensorWorking: "sensore OK", sensorSilent: "sensore muto: cieco", waiting: { "SMS in attesa: \($0)" },
                  parkedFall: "la tua moto parcheggiata è caduta. Nessuno la guidava: i tuoi contatti non sono stati avvisati.")
        }
    }
}
