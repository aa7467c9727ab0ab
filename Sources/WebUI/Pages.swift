// SPDX-License-Identifier: Apache-2.0
import DetectorLab
import RideGuardCore
import Storage
import SystemCalls
import RideGuardDoctor
import AgentControl
import SystemTime

/// The pages' HTML: small, one column, big targets for a thumb, nothing loaded from elsewhere.
enum Pages {
    static let sections = [("/", "Status"), ("/contacts", "Contacts"), ("/profile", "Rider"), ("/checks", "Checks"),
                           ("/journal", "Journal"), ("/recordings", "Recordings"), ("/card", "Card")]

    /// What a change said once done (`?done=`): fixed texts, never taken from the address.
    static let done = ["added": "Contact added. An SMS asks them to confirm: they reply OK, or STOP to decline.",
                       "asked": "Asked again: an SMS asks them to confirm.", "confirmed": "Marked confirmed by you.", "removed": "Contact removed.", "moved": "Contact moved up.",
                       "test": "Test SMS queued: RideGuard sends it now (it says it is a test).", "saved": "Saved.",
                       "buzzed": "The buzzer sounded three short beeps.",
                       "selftest": "A self-test SMS is on its way to your phone."]

    static func layout(title: String, body: String, csrf: String?, nav: String?) -> String {
        let links = csrf == nil ? "" : "<nav>" + sections.map { path, name in
            "<a href=\"\(path)\"\(path == nav ? " aria-current=page" : "")>\(name)</a>"
        }.joined() + "</nav>"
        // Every form of the page carries the session's CSRF token.
        let body = body.replacing(csrfSlot, with: "<input type=hidden name=csrf value=\"\(esc(csrf ?? ""))\">")
        return """
            <!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content="width=device-width,initial-scale=1">\
            <title>RideGuard · \(esc(title))</title><link rel=stylesheet href=/style.css><script src=/app.js defer></script></head>\
            <body>\(links)<main><h1>\(esc(title))</h1>\(body)</main></body></html>
            """
    }

    /// Where a form's CSRF token goes; `layout` puts the session's there.
    static let csrfSlot = "<input type=hidden name=csrf data-slot>"

    /// A form that changes something (it carries the session's CSRF token).
    static func form(_ action: String, _ fields: String, button: String, kind: String = "") -> String {
        "<form method=post action=\"\(action)\"\(kind.isEmpty ? "" : " class=\(kind)")>\(csrfSlot)\(fields)<button>\(esc(button))</button></form>"
    }

    static func said(_ text: String?) -> String { text.map { "<p class=ok role=status>\(esc($0))</p>" } ?? "" }
    static func problem(_ text: String?) -> String { text.map { "<p class=bad role=alert>\(esc($0))</p>" } ?? "" }

    static let notPaired = """
        <p>This phone is not paired with the bike's RideGuard.</p>
        <ol><li>On the Pi: <code>sudo rideguard web pair</code>, then scan the QR code it draws;</li>
        <li>or text <b>PAIR</b> to the bike's number from the rider's own phone, and open the link it sends back.</li></ol>
        <p>A link works once, for 10 minutes.</p>
        """

    static let badCode = """
        <p class=bad>This pairing link does not work: it was used already, it is more than 10 minutes old, or it was mistyped.</p>
        <p>Make a new one: <code>sudo rideguard web pair</code> on the Pi, or text <b>PAIR</b> to the bike.</p>
        """

    // MARK: Status

    static func statusPage(live: String) -> String {
        "<div id=status data-live=\"/live/status\" aria-live=polite>\(live)</div>"
            + "<h2>This phone</h2>" + form("/forget", "", button: "Unpair this phone", kind: "danger")
    }

    static func status(_ agent: WebApp.Agent, hasMessage: Bool, now: Double) -> String {
        guard case .running(let s) = agent else {
            if case .down(let reason) = agent { return "<p class=\"big bad\">\(esc(reason))</p><p>The other pages still work: contacts, rider, journal.</p>" }
            return ""
        }
        var html = ""
        let d = { (value: Double, decimals: Int) in DecimalFormat.string(value, decimals: decimals) }
        // The workflow's own verdict, as `status` and the buzzer have it: never worked out here.
        let protection = s.protection ?? Protection(.notProtecting, reasons: ["the agent is older than this page: run rideguard status on the Pi"])
        switch (s.state, protection.level) {
        case (.alertCountdown, _):
            html += "<p class=\"big bad\">Crash detected: the alert goes out in \(Int(s.countdownSeconds ?? 0)) s. Press the button to cancel.</p>"
        case (_, .emergency):
            html += "<p class=\"big bad\">Emergency: \(esc(s.state.rawValue))\(s.calls.map { " · calls: \(esc($0))" } ?? "")</p>"
        case (_, .protecting):
            html += "<p class=\"big ok\">Protecting</p>"
        case (_, .degraded):
            html += "<p class=\"big warn\">Protecting, degraded: \(esc(protection.reasons.joined(separator: "; ")))</p>"
        case (_, .notProtecting):
            html += "<p class=\"big bad\">NOT protecting: \(esc(protection.reasons.joined(separator: "; ")))</p>"
        }
        // Not a reason not to protect: alerts then start with the default words.
        if !hasMessage { html += "<p class=warn>No alert message of the rider's own yet (Rider): alerts start with the default one.</p>" }
        if let ack = s.acknowledgement { html += "<p class=ok>Acknowledged by \(esc(ack.who)) (\(esc(ack.channel.rawValue)))</p>" }
        if let problem = s.storageProblem { html += "<p class=warn>Storage: \(esc(problem))</p>" }
        if let problem = s.gpio.problem { html += "<p class=warn>GPIO: \(esc(problem))</p>" }
        var rows: [(String, String, String)] = []
        let gravity = s.sensor.gravityG
        let level = gravity.map { abs($0 - 1) <= 0.1 } ?? false
        rows.append(("IMU", "\(d(s.sensor.rateHz, 0)) Hz" + (gravity.map { ", \(d($0, 2)) g at rest " + (abs($0 - 1) <= 0.1 ? "✓" : "✗ (should be 1 g)") } ?? ", no reading yet")
                     + (s.sensor.simulated ? " (simulated)" : ""), s.sensor.blind || !level ? "bad" : "ok"))
        if let fix = s.fix {
            rows.append(("GPS", "\(d(fix.latitude, 5)), \(d(fix.longitude, 5)), \(Self.age(fix.ageSeconds)) old", fix.ageSeconds < 10 ? "ok" : "warn"))
        } else {
            rows.append(("GPS", "no fix yet (alerts go without a position)", "warn"))
        }
        let m = s.modem
        if m.real {
            let parts = [m.connected ? "connected" : "NOT connected", m.sim.map { "SIM \($0)" }, m.registration.map { "network: \($0)" },
                         m.signalDBm.map { "signal \($0) dBm" }, m.problem].compactMap { $0 }
            rows.append(("Modem", parts.joined(separator: ", "), m.connected && m.problem == nil ? "ok" : "bad"))
        } else {
            rows.append(("Modem", "simulated (messages are printed, not sent)", "warn"))
        }
        rows.append(("Outbox", s.pendingMessages == 0 ? "nothing waiting" : "\(s.pendingMessages) message(s) waiting", s.pendingMessages == 0 ? "ok" : "warn"))
        let confirmed = (s.contactLines ?? []).filter { $0.state == "confirmed" }.count
        let contactsText = s.contactLines == nil ? "\(s.contacts)" : "\(s.contacts), \(confirmed) confirmed"
        rows.append(("Contacts", contactsText, s.contacts == 0 ? "bad" : confirmed == 0 && s.contactLines != nil ? "warn" : "ok"))
        rows.append(("Button", buttonState(s.gpio, now: now) ?? "Waiting for a press…", "ok"))
        if let bike = s.bike { rows.append(("Bike", bike.context + (bike.ignition.map { ", ignition \($0)" } ?? ""), "ok")) }
        html += "<dl>" + rows.map { "<div class=\($0.2)><dt>\($0.0)</dt><dd>\(esc($0.1))</dd></div>" }.joined() + "</dl>"
        return html
    }

    static func age(_ seconds: Double) -> String {
        seconds < 90 ? "\(Int(seconds.rounded())) s" : seconds < 5400 ? "\(Int((seconds / 60).rounded())) min" : "\(Int((seconds / 3600).rounded())) h"
    }

    // MARK: Contacts

    /// What removing the last contact means, said before it is done.
    static func lastContactWarning(_ contact: Contact) -> String {
        "\(contact.name) is your last contact. Without one, RideGuard cannot alert anyone after a crash: it stops protecting you "
            + "(two long beeps every 30 s) until a contact is added. Add another contact first, or remove \(contact.name) anyway."
    }

    static func contacts(_ contacts: [Contact], now: Double, said: String?, problem: String?, typed: (name: String, number: String),
                         confirmRemoving: Contact? = nil) -> String {
        var html = Self.said(said) + Self.problem(problem)
        if let last = confirmRemoving {
            html += form("/contacts", "<input type=hidden name=number value=\"\(esc(last.number))\"><input type=hidden name=action value=remove>"
                         + "<input type=hidden name=confirm value=last>", button: "Remove \(last.name) anyway: stop protecting", kind: "danger")
        }
        if contacts.isEmpty { html += "<p class=bad>No contact yet: RideGuard is NOT protecting you, it does not arm without one.</p>" }
        html += "<ol class=list>"
        for (index, c) in contacts.enumerated() {
            let number = "<input type=hidden name=number value=\"\(esc(c.number))\">"
            let standing = c.standing.isConfirmed ? "ok" : c.standing.isDeclined || c.standing.name == "unreachable" ? "bad" : "warn"
            html += "<li><div><b>\(esc(c.name))</b> <span>\(esc(c.number))</span></div>"
                + "<p class=\"standing \(standing)\" data-state=\(c.standing.name)>\(esc(c.standing.summary(now: now)))</p><div class=row>"
                + (c.standing.isConfirmed ? "" : form("/contacts", number + "<input type=hidden name=action value=ask>", button: "Ask again")
                   + form("/contacts", number + "<input type=hidden name=action value=confirm>", button: "I called them: confirmed"))
                + (index > 0 ? form("/contacts", number + "<input type=hidden name=action value=up>", button: "Move up") : "")
                + form("/contacts", number + "<input type=hidden name=action value=test>", button: "Test SMS")
                + form("/contacts", number + "<input type=hidden name=action value=remove>", button: "Remove", kind: "danger")
                + "</div></li>"
        }
        html += "</ol><h2>Add a contact</h2>"
        html += form("/contacts", """
            <input type=hidden name=action value=add>\
            <label>Name <input name=name required maxlength=60 autocomplete=off value="\(esc(typed.name))"></label>\
            <label>Number, with its country code <input name=number type=tel required placeholder="+33 6 12 34 56 78" value="\(esc(typed.number))"></label>
            """, button: "Add")
        html += "<p class=small>Alerts and calls go to the contacts in this order, to every one but those who declined. "
            + "A contact added is asked by SMS to confirm (reply OK, or STOP to decline).</p>"
        return html
    }

    // MARK: Rider

    static let languages: [(MessageLanguage, String)] = [(.en, "English"), (.fr, "Français"), (.de, "Deutsch"), (.es, "Español"), (.it, "Italiano")]

    static func profile(_ p: RiderProfile, language: MessageLanguage, said: String?, problem: String?) -> String {
        let options = languages.map { code, name in
            "<option value=\(code.rawValue)\(code == language ? " selected" : "")>\(name)</option>"
        }.joined()
        return Self.said(said) + Self.problem(problem) + form("/profile", """
            <label>Rider's name <input name=name maxlength=60 value="\(esc(p.name ?? ""))"></label>\
            <label>Rider's own phone (answers STATUS and PAIR) <input name=phone type=tel value="\(esc(p.phone ?? ""))"></label>\
            <label>Alert message (first in every alert) <textarea name=message rows=3 maxlength=300>\(esc(p.message ?? ""))</textarea></label>\
            <label>Medical note for rescuers (blood group, allergies) <textarea name=medical rows=3 maxlength=300>\(esc(p.medicalNote ?? ""))</textarea></label>\
            <label>Language of the alerts, the answers and the card <select name=language>\(options)</select></label>
            """, button: "Save")
    }

    // MARK: Checks

    static func checksPage(live: String, said done: String?, problem: String? = nil) -> String {
        said(done) + self.problem(problem)
            + "<h2>The button</h2><p>Press the “I'm fine” button now.</p><div id=button data-live=\"/live/button\" aria-live=polite>\(live)</div>"
            + "<h2>The buzzer</h2>" + form("/checks", "<input type=hidden name=action value=buzz>", button: "Sound the buzzer")
            + "<h2>The SMS</h2><p>RideGuard texts your own phone a short report, now (at most one a day; it does so by itself every month).</p>"
            + form("/checks", "<input type=hidden name=action value=selftest>", button: "Send me the self-test SMS")
            + "<h2>Everything</h2><p><a class=button href=/checks/doctor>Run the doctor</a> (takes a few seconds; keep the bike still)</p>"
    }

    static func button(_ agent: WebApp.Agent, now: Double) -> String {
        guard case .running(let s) = agent else {
            if case .down(let reason) = agent { return "<p class=bad>\(esc(reason))</p>" }
            return ""
        }
        if let state = buttonState(s.gpio, now: now) { return "<p class=\"big ok\">\(state)</p>" }
        return "<p class=big>Waiting for a press…</p>" + (s.gpio.problem.map { "<p class=bad>\(esc($0))</p>" } ?? "")
    }

    /// "The button is pressed ✓", "Pressed 3 s ago ✓" (for 30 s), or nil.
    static func buttonState(_ gpio: AgentStatus.GPIO, now: Double) -> String? {
        if gpio.buttonDown == true { return "The button is pressed ✓" }
        guard let last = gpio.lastPress, now - last < 30 else { return nil }
        return "Pressed \(age(max(0, now - last))) ago ✓"
    }

    static func doctor(_ checks: [DoctorCheck], canProtect: Bool) -> String {
        "<ul class=list>" + checks.map { check in
            let kind = check.outcome == .ok ? "ok" : check.outcome == .warning ? "warn" : "bad"
            return "<li class=\(kind)><b>\(check.outcome.rawValue) \(esc(check.part))</b> \(esc(check.detail))"
                + (check.outcome != .ok ? check.fix.map { "<br><span class=small>→ \(esc($0))</span>" } ?? "" : "") + "</li>"
        }.joined() + "</ul>"
            + (canProtect ? "<p class=\"big ok\">RideGuard can protect the rider.</p>" : "<p class=\"big bad\">RideGuard cannot protect the rider yet: fix each ✗.</p>")
    }

    // MARK: Journal

    static func journal(_ records: [JournalRecord], kind: JournalKind?, since: String, problem: String?) -> String {
        let options = "<option value=\"\">every kind</option>" + JournalKind.allCases.map {
            "<option\($0 == kind ? " selected" : "")>\($0.rawValue)</option>"
        }.joined()
        var html = """
            <form method=get action=/journal class=row><label>Kind <select name=kind>\(options)</select></label>\
            <label>Since <input name=since size=8 placeholder="12h" value="\(esc(since))"></label><button>Show</button></form>
            """
        html += Self.problem(problem)
        html += records.isEmpty && problem == nil ? "<p>No events.</p>" : "<ul class=list>" + records.map {
            "<li><span class=small>\(esc(Times.iso8601($0.time))) · \(esc($0.kind.rawValue))</span><br>\(esc($0.text))</li>"
        }.joined() + "</ul>"
        return html
    }

    // MARK: Recordings

    static func recordings(_ files: [(name: String, bytes: Int, modified: Double)], said: String?, problem: String?) -> String {
        var html = Self.said(said) + Self.problem(problem)
        html += form("/recordings", """
            <input type=hidden name=action value=start>\
            <label>Name (empty: the date and time) <input name=name maxlength=60 pattern="[A-Za-z0-9._-]*"></label>\
            <label>Minutes <input name=minutes type=number min=1 max=120 value=10></label>
            """, button: "Start recording")
        html += form("/recordings", "<input type=hidden name=action value=stop>", button: "Stop recording")
        html += files.isEmpty ? "<p>No recording yet.</p>" : "<ul class=list>" + files.map { file in
            let name = urlEncoded(file.name)
            return "<li><b>\(esc(file.name))</b> <span class=small>\(file.bytes >> 10) KiB · \(esc(Times.iso8601(file.modified)))</span><div class=row>"
                + "<a class=button href=\"/recordings/report?name=\(name)\">Report</a><a class=button href=\"/recordings/file?name=\(name)\">CSV</a></div></li>"
        }.joined() + "</ul>"
        return html
    }

    // MARK: Card

    static func cardPage(svg: String?) -> String {
        guard svg != nil else { return "<p class=bad>The card's text does not fit on it: shorten the medical note (Rider).</p>" }
        return "<p>Print it at 100 % (105 × 74 mm) and keep it in the helmet.</p><img src=/card.svg alt=\"The rescue card\" class=card>"
            + "<p><a class=button href=/card.svg download>Download the card (SVG)</a></p>"
    }
}
