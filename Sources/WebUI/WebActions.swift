// SPDX-License-Identifier: Apache-2.0
import HTTPRequests
import DetectorLab
import FoundationEssentials
import Glibc
import QRCode
import RideGuardCore
import Storage
import SystemCalls
import SystemPackage
import RideGuardDoctor
import AgentControl
import Synchronization
import SystemTime

/// What each page reads and changes: the database through the same calls as the command line, the
/// agent through its control socket.
extension WebApp {
    // MARK: Contacts

    func contactsPage(_ session: WebSession, said: String?, problem: String? = nil, typed: (name: String, number: String) = ("", ""),
                      confirmRemoving: Contact? = nil, status: Int = 200) -> WebResponse {
        let contacts = (try? database.contacts()) ?? []
        let t = texts()
        return page(session, t(.navContacts), Pages.contacts(contacts, now: now(), said: said, problem: problem, typed: typed,
                                                             confirmRemoving: confirmRemoving, t),
                    status: status, nav: "/contacts")
    }

    func changeContacts(_ form: [String: String], _ session: WebSession) -> WebResponse {
        let number = form["number"] ?? "", name = form["name"] ?? ""
        let t = texts()
        do {
            switch form["action"] {
            case "add":
                let added = try database.addContact(name: name, number: number, now: now())
                try database.askContact(added.number, language: t.language, now: now())
                return WebResponse.redirect("/contacts?done=added")
            case "ask":
                try database.askContact(number, language: t.language, now: now())
                return WebResponse.redirect("/contacts?done=asked")
            case "confirm":
                try database.confirmContactByHand(number, now: now())
                return WebResponse.redirect("/contacts?done=confirmed")
            case "remove":
                // The last contact goes only once the rider has read what that means.
                let contacts = try database.contacts()
                if contacts.count == 1, contacts[0].number == number, form["confirm"] != "last" {
                    return contactsPage(session, said: nil, problem: Pages.lastContactWarning(contacts[0], t), confirmRemoving: contacts[0], status: 409)
                }
                try database.removeContact(number, now: now())
                return WebResponse.redirect("/contacts?done=removed")
            case "up":
                try database.moveContactUp(number, now: now())
                return WebResponse.redirect("/contacts?done=moved")
            case "test":
                guard (try database.contacts()).contains(where: { $0.number == number }) else { throw RecordError(ScreenPhrase(.noSuchContact)) }
                let profile = try database.profile()
                let body = MessageComposer.test(riderName: profile.name ?? t(.setupRider), language: t.language)
                try database.outbox.enqueue(recipient: number, kind: .test, body: body, now: now())
                return WebResponse.redirect("/contacts?done=test")
            default:
                throw RecordError(reason: "unknown change")
            }
        } catch let error as RecordError {
            return contactsPage(session, said: nil, problem: error.said(t), typed: (name, number), status: 422)
        } catch {
            return contactsPage(session, said: nil, problem: t(.notSaved, "\(error)"), typed: (name, number), status: 500)
        }
    }

    // MARK: Profile and message

    func profilePage(_ session: WebSession, said: String?, problem: String? = nil, status: Int = 200) -> WebResponse {
        let profile = (try? database.profile()) ?? RiderProfile(name: nil, medicalNote: nil, message: nil, phone: nil)
        let t = texts()
        return page(session, t(.navRider), Pages.profile(profile, language: profile.language ?? configuration.messages.language,
                                                         said: said, problem: problem, t), status: status, nav: "/profile")
    }

    func changeProfile(_ form: [String: String], _ session: WebSession) -> WebResponse {
        let t = texts()
        do {
            let before = try database.profile()
            if let name = form["name"], name != (before.name ?? "") { try database.setRiderName(name) }
            if let note = form["medical"], note != (before.medicalNote ?? "") { try database.setMedicalNote(note) }
            if let phone = form["phone"], phone != (before.phone ?? "") { try database.setRiderPhone(phone) }
            if let message = form["message"], message != (before.message ?? "") { try database.setMessage(message) }
            if let code = form["language"], code != (before.language ?? configuration.messages.language).rawValue {
                guard let language = MessageLanguage(rawValue: code) else { throw RecordError(ScreenPhrase(.unknownLanguage, code)) }
                try database.setLanguage(language)
            }
            return WebResponse.redirect("/profile?done=saved")
        } catch let error as RecordError {
            return profilePage(session, said: nil, problem: error.said(t), status: 422)
        } catch {
            return profilePage(session, said: nil, problem: t(.notSaved, "\(error)"), status: 500)
        }
    }

    // MARK: Checks

    func checkAction(_ form: [String: String], _ session: WebSession) -> WebResponse {
        let t = texts()
        let checks: [String: (request: ControlRequest, done: String, refused: ScreenKey, down: ScreenKey)] = [
            "buzz": (.buzz, "buzzed", .buzzerNotSounded, .buzzerIsTheAgents),
            "selftest": (.selfTest, "selftest", .selfTestNotSent, .selfTestIsTheAgents),
        ]
        guard let (request, done, refused, down) = checks[form["action"] ?? ""] else {
            return page(session, t(.navChecks), "<p class=bad>\(esc(t(.unknownCheck)))</p>", status: 400)
        }
        do {
            let reply = try ControlClient.send(request, path: configuration.controlSocket, timeout: 3)
            if let error = reply.error {
                return page(session, t(.navChecks), Pages.checksPage(live: buttonPart(), said: nil, problem: "\(t(refused)): \(error)", t), status: 409, nav: "/checks")
            }
            return WebResponse.redirect("/checks?done=\(done)")
        } catch {
            return page(session, t(.navChecks), Pages.checksPage(live: buttonPart(), said: nil, problem: t(down), t), status: 503, nav: "/checks")
        }
    }

    func doctorPage(_ session: WebSession) async -> WebResponse {
        var doctor = Doctor(configurationPath: configurationPath, hardware: nil)
        doctor.fixWait = 2
        doctor.modemWait = 5
        let checks = Mutex<[DoctorCheck]>([])
        let canProtect = await doctor.run { check in checks.withLock { $0.append(check) } }
        let t = texts()
        return page(session, t(.titleDoctor), Pages.doctor(checks.withLock { $0 }, canProtect: canProtect, t), nav: "/checks")
    }

    // MARK: Journal

    func journalPage(_ query: [String: String], _ session: WebSession) -> WebResponse {
        let kind = query["kind"].flatMap { $0.isEmpty ? nil : JournalKind(rawValue: $0) }
        let sinceText = (query["since"] ?? "").trimmingCharacters(in: " ")
        let since = sinceText.isEmpty ? nil : JournalSince.time(sinceText, now: now())
        let t = texts()
        if !sinceText.isEmpty && since == nil {
            return page(session, t(.navJournal), Pages.journal([], kind: kind, since: sinceText, problem: t(.sinceMust, JournalSince.help), t), status: 422, nav: "/journal")
        }
        do {
            let records = try database.journal(kind: kind, since: since)
            return page(session, t(.navJournal), Pages.journal(records, kind: kind, since: sinceText, problem: nil, t), nav: "/journal")
        } catch {
            return page(session, t(.navJournal), Pages.journal([], kind: kind, since: sinceText, problem: t(.journalUnreadable, "\(error)"), t), status: 500, nav: "/journal")
        }
    }

    // MARK: Recordings

    var recordingsFolder: String {
        FilePath(configuration.database).removingLastComponent().appending("recordings").string
    }

    /// The recordings, newest first: name, size, when written.
    func recordings() -> [(name: String, bytes: Int, modified: Double)] {
        let folder = recordingsFolder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        return names.filter { $0.hasSuffix(".csv") }.compactMap { name in
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return (name, Int(info.st_size), Double(info.st_mtim.tv_sec))
        }.sorted { $0.modified > $1.modified }
    }

    func recordingsPage(_ session: WebSession, said: String?, problem: String? = nil, status: Int = 200) -> WebResponse {
        let t = texts()
        return page(session, t(.navRecordings), Pages.recordings(recordings(), said: said, problem: problem, t), status: status, nav: "/recordings")
    }

    func recordingAction(_ form: [String: String], _ session: WebSession) -> WebResponse {
        let t = texts()
        let request: ControlRequest
        if form["action"] == "stop" {
            request = .stopRecording
        } else {
            guard let minutes = Double(form["minutes"] ?? ""), minutes > 0, minutes <= 120 else {
                return recordingsPage(session, said: nil, problem: t(.recordingLength), status: 422)
            }
            // No name given: the date and time, as a rider would look for it later.
            let typed = (form["name"] ?? "").trimmingCharacters(in: " ")
            let name = typed.isEmpty ? "ride-" + Times.iso8601(now()).prefix(16).replacing(":", with: "-") : typed
            request = .record(name: name, seconds: minutes * 60)
        }
        do {
            let reply = try ControlClient.send(request, path: configuration.controlSocket, timeout: 3)
            if let error = reply.error { return recordingsPage(session, said: nil, problem: error, status: 409) }
            let name = reply.path.map { FilePath($0).lastComponent?.string ?? $0 } ?? ""
            return recordingsPage(session, said: request == .stopRecording ? t(.recordingStopped, name) : t(.recordingTo, name))
        } catch {
            return recordingsPage(session, said: nil, problem: t(.recordingsAreTheAgents), status: 503)
        }
    }

    /// A recording's path when `name` is one of them (a plain file name, never a path or a link).
    func recordingPath(_ name: String) -> String? {
        guard recordings().contains(where: { $0.name == name }) else { return nil }
        return recordingsFolder + "/" + name
    }

    func recordingFile(_ name: String, _ session: WebSession) -> WebResponse {
        guard let path = recordingPath(name) else { return noSuchRecording(session) }
        return WebResponse.file([], type: "text/csv; charset=utf-8", name: name, path: path)
    }

    func recordingReport(_ name: String, _ session: WebSession) -> WebResponse {
        guard let path = recordingPath(name) else { return noSuchRecording(session) }
        do {
            let report = try TraceReport.build(path: path, configuration: configuration.detector)
            return WebResponse.html(ReportHTML.render(report, configuration: configuration.detector),
                                    policy: "default-src 'none'; style-src 'unsafe-inline'; img-src data:")   // the report has no script
        } catch {
            let t = texts()
            return page(session, t(.navRecordings), "<p class=bad>\(esc(t(.recordingUnreadable, name, "\(error)")))</p>", status: 422, nav: "/recordings")
        }
    }

    private func noSuchRecording(_ session: WebSession) -> WebResponse {
        let t = texts()
        return page(session, t(.navRecordings), "<p class=bad>\(esc(t(.noSuchRecording)))</p>", status: 404, nav: "/recordings")
    }

    // MARK: Rescue card

    func cardSVG() -> String? {
        guard let profile = try? database.profile(), let contacts = try? database.contacts() else { return nil }
        let card = RescueCard(riderName: profile.name, medicalNote: profile.medicalNote,
                              contacts: contacts.map { RescueCard.Contact(name: $0.name, number: $0.number) },
                              language: profile.language ?? configuration.messages.language)
        guard let qr = try? QRCode.encode(card.qrText) else { return nil }
        return card.svg(qr: qr)
    }
}
