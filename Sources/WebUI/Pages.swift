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
    static let sections: [(path: String, name: ScreenKey)] = [("/", .navStatus), ("/contacts", .navContacts), ("/profile", .navRider),
                                                              ("/checks", .navChecks), ("/journal", .navJournal), ("/recordings", .navRecordings),
                                                              ("/card", .navCard)]

    /// What a change said once done (`?done=`): fixed texts, never taken from the address.
    static let done: [String: ScreenKey] = ["added": .doneAdded, "asked": .doneAsked, "confirmed": .doneConfirmed, "removed": .doneRemoved,
                                            "moved": .doneMoved, "test": .doneTest, "saved": .doneSaved, "buzzed": .doneBuzzed,
                                            "selftest": .doneSelfTest]

    static func layout(title: String, body: String, csrf: String?, nav: String?, _ t: ScreenText) -> String {
        let links = csrf == nil ? "" : "<nav>" + sections.map { path, name in
            "<a href=\"\(path)\"\(path == nav ? " aria-current=page" : "")>\(esc(t(name)))</a>"
        }.joined() + "</nav>"
        // Every form of the page carries the session's CSRF token.
        let body = body.replacing(csrfSlot, with: "<input type=hidden name=csrf value=\"\(esc(csrf ?? ""))\">")
        return """
            <!doctype html><html lang=\(t.language.rawValue)><head><meta charset=utf-8><meta name=viewport content="width=device-width,initial-scale=1">\
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

    // MARK: Status

    static func statusPage(live: String, _ t: ScreenText) -> String {
        "<div id=status data-live=\"/live/status\" aria-live=polite>\(live)</div>"
            + "<h2>\(esc(t(.thisPhone)))</h2>" + form("/forget", "", button: t(.unpairThisPhone), kind: "danger")
    }

    static func status(_ agent: WebApp.Agent, hasMessage: Bool, now: Double, _ t: ScreenText) -> String {
        guard case .running(let s) = agent else {
            if case .down(let reason) = agent { return "<p class=\"big bad\">\(esc(reason))</p><p>\(esc(t(.otherPagesWork)))</p>" }
            return ""
        }
        var html = ""
        let d = { (value: Double, decimals: Int) in DecimalFormat.string(value, decimals: decimals) }
        // The workflow's own verdict, as `status` and the buzzer have it: never worked out here.
        let protection = s.protection ?? Protection(.notProtecting, reasons: [t(.agentOlder)])
        switch (s.state, protection.level) {
        case (.alertCountdown, _):
            html += "<p class=\"big bad\">\(esc(t(.countdown, String(Int(s.countdownSeconds ?? 0)))))</p>"
        case (_, .emergency):
            html += "<p class=\"big bad\">\(esc(t(.emergency, s.state.rawValue)))\(s.calls.map { " · calls: \(esc($0))" } ?? "")</p>"
        case (_, .protecting):
            html += "<p class=\"big ok\">\(esc(t(.protecting)))</p>"
        case (_, .degraded):
            html += "<p class=\"big warn\">\(esc(t(.degraded, protection.reasons.joined(separator: "; "))))</p>"
        case (_, .notProtecting):
            html += "<p class=\"big bad\">\(esc(t(.notProtecting, protection.reasons.joined(separator: "; "))))</p>"
        }
        // Not a reason not to protect: alerts then start with the default words.
        if !hasMessage { html += "<p class=warn>\(esc(t(.noOwnMessage)))</p>" }
        if let ack = s.acknowledgement { html += "<p class=ok>\(esc(t(.acknowledgedBy, ack.who, ack.channel.rawValue)))</p>" }
        if let problem = s.storageProblem { html += "<p class=warn>\(esc(t(.storageProblem, problem)))</p>" }
        if let problem = s.gpio.problem { html += "<p class=warn>GPIO: \(esc(problem))</p>" }
        var rows: [(String, String, String)] = []
        let gravity = s.sensor.gravityG
        let level = gravity.map { abs($0 - 1) <= 0.1 } ?? false
        rows.append((t(.rowIMU), t(.imuRate, d(s.sensor.rateHz, 0))
                     + (gravity.map { ", " + t(.imuAtRest, d($0, 2)) + " " + (abs($0 - 1) <= 0.1 ? "✓" : "✗ " + t(.imuShouldBeOneG)) } ?? ", " + t(.imuNoReading))
                     + (s.sensor.simulated ? " " + t(.simulatedMark) : ""), s.sensor.blind || !level ? "bad" : "ok"))
        if let fix = s.fix {
            rows.append((t(.rowGPS), t(.gpsFix, d(fix.latitude, 5), d(fix.longitude, 5), Self.age(fix.ageSeconds)), fix.ageSeconds < 10 ? "ok" : "warn"))
        } else {
            rows.append((t(.rowGPS), t(.gpsNoFix), "warn"))
        }
        let m = s.modem
        if m.real {
            let parts = [t(m.connected ? .modemConnected : .modemNotConnected), m.sim.map { t(.modemSIM, $0) }, m.registration.map { t(.modemNetwork, $0) },
                         m.signalDBm.map { t(.modemSignal, String($0)) }, m.simProblem ?? m.problem].compactMap { $0 }
            rows.append((t(.rowModem), parts.joined(separator: ", "), m.connected && m.problem == nil && m.simProblem == nil ? "ok" : "bad"))
        } else {
            rows.append((t(.rowModem), t(.modemSimulated), "warn"))
        }
        rows.append((t(.rowOutbox), s.pendingMessages == 0 ? t(.outboxEmpty) : t(.outboxWaiting, String(s.pendingMessages)), s.pendingMessages == 0 ? "ok" : "warn"))
        let confirmed = (s.contactLines ?? []).filter { $0.state == "confirmed" }.count
        let contactsText = s.contactLines == nil ? t(.contactsCount, String(s.contacts)) : t(.contactsConfirmed, String(s.contacts), String(confirmed))
        rows.append((t(.rowContacts), contactsText, s.contacts == 0 ? "bad" : confirmed == 0 && s.contactLines != nil ? "warn" : "ok"))
        rows.append((t(.rowButton), buttonState(s.gpio, now: now, t) ?? t(.waitingForPress), "ok"))
        if let bike = s.bike { rows.append((t(.rowBike), bike.context + (bike.ignition.map { ", ignition \($0)" } ?? ""), "ok")) }
        html += "<dl>" + rows.map { "<div class=\($0.2)><dt>\($0.0)</dt><dd>\(esc($0.1))</dd></div>" }.joined() + "</dl>"
        return html
    }

    static func age(_ seconds: Double) -> String {
        seconds < 90 ? "\(Int(seconds.rounded())) s" : seconds < 5400 ? "\(Int((seconds / 60).rounded())) min" : "\(Int((seconds / 3600).rounded())) h"
    }

    // MARK: Contacts

    /// What removing the last contact means, said before it is done.
    static func lastContactWarning(_ contact: Contact, _ t: ScreenText) -> String {
        t(.lastContactWarning, contact.name)
    }

    static func contacts(_ contacts: [Contact], now: Double, said: String?, problem: String?, typed: (name: String, number: String),
                         confirmRemoving: Contact? = nil, _ t: ScreenText) -> String {
        var html = Self.said(said) + Self.problem(problem)
        if let last = confirmRemoving {
            html += form("/contacts", "<input type=hidden name=number value=\"\(esc(last.number))\"><input type=hidden name=action value=remove>"
                         + "<input type=hidden name=confirm value=last>", button: t(.removeAnyway, last.name), kind: "danger")
        }
        if contacts.isEmpty { html += "<p class=bad>\(esc(t(.noContactYet)))</p>" }
        html += "<ol class=list>"
        for (index, c) in contacts.enumerated() {
            let number = "<input type=hidden name=number value=\"\(esc(c.number))\">"
            let standing = c.standing.isConfirmed ? "ok" : c.standing.isDeclined || c.standing.name == "unreachable" ? "bad" : "warn"
            html += "<li><div><b>\(esc(c.name))</b> <span>\(esc(c.number))</span></div>"
                + "<p class=\"standing \(standing)\" data-state=\(c.standing.name)>\(esc(c.standing.summary(now: now, t)))</p><div class=row>"
                + (c.standing.isConfirmed ? "" : form("/contacts", number + "<input type=hidden name=action value=ask>", button: t(.askAgain))
                   + form("/contacts", number + "<input type=hidden name=action value=confirm>", button: t(.calledThemConfirmed)))
                + (index > 0 ? form("/contacts", number + "<input type=hidden name=action value=up>", button: t(.moveUp)) : "")
                + form("/contacts", number + "<input type=hidden name=action value=test>", button: t(.testSMS))
                + form("/contacts", number + "<input type=hidden name=action value=remove>", button: t(.remove), kind: "danger")
                + "</div></li>"
        }
        html += "</ol><h2>\(esc(t(.addContact)))</h2>"
        html += form("/contacts", """
            <input type=hidden name=action value=add>\
            <label>\(esc(t(.contactName))) <input name=name required maxlength=60 autocomplete=off value="\(esc(typed.name))"></label>\
            <label>\(esc(t(.contactNumber))) <input name=number type=tel required placeholder="+33 6 12 34 56 78" value="\(esc(typed.number))"></label>
            """, button: t(.add))
        html += "<p class=small>\(esc(t(.contactsOrder)))</p>"
        return html
    }

    // MARK: Rider

    static let languages: [(MessageLanguage, String)] = MessageLanguage.allCases.map { ($0, $0.name) }

    static func profile(_ p: RiderProfile, language: MessageLanguage, said: String?, problem: String?, _ t: ScreenText) -> String {
        let options = languages.map { code, name in
            "<option value=\(code.rawValue)\(code == language ? " selected" : "")>\(name)</option>"
        }.joined()
        return Self.said(said) + Self.problem(problem) + form("/profile", """
            <label>\(esc(t(.riderName))) <input name=name maxlength=60 value="\(esc(p.name ?? ""))"></label>\
            <label>\(esc(t(.riderPhone))) <input name=phone type=tel value="\(esc(p.phone ?? ""))"></label>\
            <label>\(esc(t(.alertMessage))) <textarea name=message rows=3 maxlength=300>\(esc(p.message ?? ""))</textarea></label>\
            <label>\(esc(t(.medicalNote))) <textarea name=medical rows=3 maxlength=300>\(esc(p.medicalNote ?? ""))</textarea></label>\
            <label>\(esc(t(.languageChoice))) <select name=language>\(options)</select></label>
            """, button: t(.save))
    }

    // MARK: Checks

    static func checksPage(live: String, said done: String?, problem: String? = nil, _ t: ScreenText) -> String {
        said(done) + self.problem(problem)
            + "<h2>\(esc(t(.buttonHeading)))</h2><p>\(esc(t(.pressTheButton)))</p><div id=button data-live=\"/live/button\" aria-live=polite>\(live)</div>"
            + "<h2>\(esc(t(.buzzerHeading)))</h2>" + form("/checks", "<input type=hidden name=action value=buzz>", button: t(.soundTheBuzzer))
            + "<h2>\(esc(t(.smsHeading)))</h2><p>\(esc(t(.smsExplained)))</p>"
            + form("/checks", "<input type=hidden name=action value=selftest>", button: t(.sendSelfTest))
            + "<h2>\(esc(t(.everythingHeading)))</h2><p><a class=button href=/checks/doctor>\(esc(t(.runTheDoctor)))</a> \(esc(t(.doctorTakes)))</p>"
    }

    static func button(_ agent: WebApp.Agent, now: Double, _ t: ScreenText) -> String {
        guard case .running(let s) = agent else {
            if case .down(let reason) = agent { return "<p class=bad>\(esc(reason))</p>" }
            return ""
        }
        if let state = buttonState(s.gpio, now: now, t) { return "<p class=\"big ok\">\(esc(state))</p>" }
        return "<p class=big>\(esc(t(.waitingForPress)))</p>" + (s.gpio.problem.map { "<p class=bad>\(esc($0))</p>" } ?? "")
    }

    /// "The button is pressed ✓", "Pressed 3 s ago ✓" (for 30 s), or nil.
    static func buttonState(_ gpio: AgentStatus.GPIO, now: Double, _ t: ScreenText) -> String? {
        if gpio.buttonDown == true { return t(.buttonPressed) }
        guard let last = gpio.lastPress, now - last < 30 else { return nil }
        return t(.pressedAgo, age(max(0, now - last)))
    }

    static func doctor(_ checks: [DoctorCheck], canProtect: Bool, _ t: ScreenText) -> String {
        "<ul class=list>" + checks.map { check in
            let kind = check.outcome == .ok ? "ok" : check.outcome == .warning ? "warn" : "bad"
            return "<li class=\(kind)><b>\(check.outcome.rawValue) \(esc(check.part))</b> \(esc(check.detail))"
                + (check.outcome != .ok ? check.fix.map { "<br><span class=small>→ \(esc($0))</span>" } ?? "" : "") + "</li>"
        }.joined() + "</ul>"
            + (canProtect ? "<p class=\"big ok\">\(esc(t(.canProtect)))</p>" : "<p class=\"big bad\">\(esc(t(.cannotProtect)))</p>")
    }

    // MARK: Journal

    static func journal(_ records: [JournalRecord], kind: JournalKind?, since: String, problem: String?, _ t: ScreenText) -> String {
        let options = "<option value=\"\">\(esc(t(.everyKind)))</option>" + JournalKind.allCases.map {
            "<option\($0 == kind ? " selected" : "")>\($0.rawValue)</option>"
        }.joined()
        var html = """
            <form method=get action=/journal class=row><label>\(esc(t(.journalKind))) <select name=kind>\(options)</select></label>\
            <label>\(esc(t(.journalSince))) <input name=since size=8 placeholder="12h" value="\(esc(since))"></label><button>\(esc(t(.show)))</button></form>
            """
        html += Self.problem(problem)
        html += records.isEmpty && problem == nil ? "<p>\(esc(t(.noEvents)))</p>" : "<ul class=list>" + records.map {
            "<li><span class=small>\(esc(Times.iso8601($0.time))) · \(esc($0.kind.rawValue))</span><br>\(esc($0.text))</li>"
        }.joined() + "</ul>"
        return html
    }

    // MARK: Recordings

    static func recordings(_ files: [(name: String, bytes: Int, modified: Double)], said: String?, problem: String?, _ t: ScreenText) -> String {
        var html = Self.said(said) + Self.problem(problem)
        html += form("/recordings", """
            <input type=hidden name=action value=start>\
            <label>\(esc(t(.recordingName))) <input name=name maxlength=60 pattern="[A-Za-z0-9._-]*"></label>\
            <label>\(esc(t(.recordingMinutes))) <input name=minutes type=number min=1 max=120 value=10></label>
            """, button: t(.startRecording))
        html += form("/recordings", "<input type=hidden name=action value=stop>", button: t(.stopRecording))
        html += files.isEmpty ? "<p>\(esc(t(.noRecording)))</p>" : "<ul class=list>" + files.map { file in
            let name = urlEncoded(file.name)
            return "<li><b>\(esc(file.name))</b> <span class=small>\(file.bytes >> 10) KiB · \(esc(Times.iso8601(file.modified)))</span><div class=row>"
                + "<a class=button href=\"/recordings/report?name=\(name)\">\(esc(t(.report)))</a><a class=button href=\"/recordings/file?name=\(name)\">CSV</a></div></li>"
        }.joined() + "</ul>"
        return html
    }

    // MARK: Card

    static func cardPage(svg: String?, _ t: ScreenText) -> String {
        guard svg != nil else { return "<p class=bad>\(esc(t(.cardTooLong)))</p>" }
        return "<p>\(esc(t(.cardPrint)))</p><img src=/card.svg alt=\"\(esc(t(.cardAlt)))\" class=card>"
            + "<p><a class=button href=/card.svg download>\(esc(t(.cardDownload)))</a></p>"
    }
}
