// SPDX-License-Identifier: Apache-2.0
import HTTPRequests
import FoundationEssentials
import Glibc
import RideGuardCore
import Storage
import Synchronization
import RideGuardDoctor
import AgentControl
import SystemCalls

/// The web page for the rider's phone: pairing, sessions, and the pages, with no HTTP server in it
/// (`rideguard-web` carries the requests). The agent's safety never depends on it: it reads the
/// agent through the control socket and changes the database as the command line does.
package final class WebApp: Sendable {
    package let configurationPath: String
    package let configuration: AgentConfiguration
    let database: RideGuardDatabase
    let now: @Sendable () -> Double
    let limiter = Mutex(PairingLimiter())

    package static let cookie = "rideguard_session"

    package init(configurationPath: String, configuration: AgentConfiguration, database: RideGuardDatabase,
                 now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.configurationPath = configurationPath
        self.configuration = configuration
        self.database = database
        self.now = now
    }

    var maxIdle: Double { configuration.web.sessionDays * 86_400 }

    /// SQLite and the control socket block (up to seconds, on a busy card or a stuck agent): each
    /// request is answered on a thread of its own, never on Swift's concurrency pool. The doctor
    /// runs its checks on threads of its own too (`Doctor.run`), and is awaited.
    package func handle(_ request: WebRequest) async -> WebResponse {
        switch await onOwnThread("web request", { self.respond(request) }) {
        case .answer(let response)?: return response
        case .doctor(let session)?: return await doctorPage(session)
        case nil: return WebResponse(status: 500, headers: WebResponse.common)
        }
    }

    enum Outcome: Sendable {
        case answer(WebResponse)
        case doctor(WebSession)
    }

    func respond(_ request: WebRequest) -> Outcome {
        // Only the page's own names: a foreign Host is someone else's name pointed at the Pi.
        guard WebLink.ownHosts(configuration.web).contains((request.headers["host"] ?? "").lowercased()) else {
            return .answer(WebResponse(status: 421, headers: [("Content-Type", "text/plain; charset=utf-8")] + WebResponse.common,
                                       body: Array("This is RideGuard's page: open it by the Pi's own address.\n".utf8)))
        }
        switch (request.method, request.path) {
        case ("GET", "/pair"): return .answer(pair(request))
        case ("GET", "/style.css"): return .answer(WebResponse.file(Array(Assets.css.utf8), type: "text/css; charset=utf-8"))
        case ("GET", "/app.js"): return .answer(WebResponse.file(Array(Assets.js.utf8), type: "text/javascript; charset=utf-8"))
        case ("GET", "/favicon.ico"): return .answer(WebResponse(status: 404, headers: WebResponse.common))
        default: break
        }
        let session: WebSession?
        do {
            session = try database.webSession(token: request.cookies[Self.cookie] ?? "", now: now(), maxIdle: maxIdle)
        } catch {
            return .answer(page(nil, "RideGuard", "<p class=bad>The database cannot be read: \(esc("\(error)"))</p>", status: 500))
        }
        guard let session else {
            return .answer(page(nil, "Not paired", Pages.notPaired, status: 401))
        }
        if request.method == "POST" {
            guard Self.sameOrigin(request), Self.equalInConstantTime(request.form["csrf"] ?? "", session.csrf) else {
                return .answer(page(session, "Refused", "<p class=bad>This change did not come from RideGuard's own page (its form token is missing or wrong): open the page again and retry.</p>", status: 403))
            }
        } else if request.method != "GET" {
            return .answer(WebResponse(status: 405, headers: [("Allow", "GET, POST")] + WebResponse.common))
        }
        if request.path == "/checks/doctor" { return .doctor(session) }
        return .answer(route(request, session))
    }

    private func route(_ request: WebRequest, _ session: WebSession) -> WebResponse {
        let post = request.method == "POST"
        switch request.path {
        case "/": return page(session, "Status", Pages.statusPage(live: statusPart()), nav: "/")
        case "/live/status": return part(statusPart())
        case "/contacts": return post ? changeContacts(request.form, session) : contactsPage(session, said: request.query["done"].flatMap { Pages.done[$0] })
        case "/profile": return post ? changeProfile(request.form, session) : profilePage(session, said: request.query["done"].flatMap { Pages.done[$0] })
        case "/checks": return post ? checkAction(request.form, session) : page(session, "Checks", Pages.checksPage(live: buttonPart(), said: request.query["done"].flatMap { Pages.done[$0] }), nav: "/checks")
        case "/live/button": return part(buttonPart())
        case "/journal": return journalPage(request.query, session)
        case "/recordings": return post ? recordingAction(request.form, session) : recordingsPage(session, said: nil)
        case "/recordings/file": return recordingFile(request.query["name"] ?? "", session)
        case "/recordings/report": return recordingReport(request.query["name"] ?? "", session)
        case "/card": return page(session, "Rescue card", Pages.cardPage(svg: cardSVG()), nav: "/card")
        case "/card.svg": return cardSVG().map { WebResponse.file(Array($0.utf8), type: "image/svg+xml", name: "rescue-card.svg") }
            ?? page(session, "Rescue card", "<p class=bad>The card's text does not fit: shorten the medical note.</p>", status: 422)
        case "/forget" where post:
            _ = try? database.revokeWebSession(session.id, now: now())
            return WebResponse.redirect("/", extra: [("Set-Cookie", "\(Self.cookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")])
        default: return page(session, "Not found", "<p>There is no such page. <a href=/>Status</a></p>", status: 404)
        }
    }

    // MARK: - Pairing

    private func pair(_ request: WebRequest) -> WebResponse {
        let remote = request.remote, at = now()
        guard limiter.withLock({ $0.allowed(remote, now: at) }) else {
            return page(nil, "Too many tries", "<p class=bad>Too many wrong pairing codes: wait a minute, then open the link again.</p>",
                        status: 429, extra: [("Retry-After", "60")])
        }
        let code = (request.query["code"] ?? "").lowercased()
        let session: WebSession?
        do {
            session = code.count == 12 ? try database.redeemPairingCode(code, label: request.headers["user-agent"] ?? "a browser", now: at, maxIdle: maxIdle) : nil
        } catch {
            return page(nil, "Pairing", "<p class=bad>The pairing could not be saved (\(esc("\(error)"))): is the SD card full or read-only?</p>", status: 500)
        }
        guard let session else {
            limiter.withLock { $0.failed(remote, now: at) }
            return page(nil, "Pairing", Pages.badCode, status: 403)
        }
        let cookie = "\(Self.cookie)=\(session.token); Path=/; Max-Age=\(Int(maxIdle)); HttpOnly; SameSite=Strict"
        return WebResponse.redirect("/", extra: [("Set-Cookie", cookie)])
    }

    /// A form must come from our own page: a browser says where it came from (`Origin`, or
    /// `Sec-Fetch-Site`); the cookie is SameSite=Strict as well.
    static func sameOrigin(_ request: WebRequest) -> Bool {
        if let site = request.headers["sec-fetch-site"], site != "same-origin" && site != "none" { return false }
        guard let origin = request.headers["origin"] else { return true }
        // Host is one of the page's own (checked first): the origin must be the same.
        return origin.lowercased() == "http://" + (request.headers["host"] ?? "").lowercased()
    }

    static func equalInConstantTime(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    // MARK: - The agent

    enum Agent {
        case running(AgentStatus)
        case down(String)
    }

    func agent() -> Agent {
        switch Doctor.agentStatus(configuration.controlSocket, timeout: 3) {
        case .running(let status): return .running(status)
        case .notRunning: return .down("RideGuard is NOT running: no crash can be detected. On the Pi: sudo systemctl start rideguard")
        case .unreachable(let reason): return .down("RideGuard's control socket cannot be used (\(reason)): the page's user must be in the rideguard group")
        }
    }

    /// The status, with the agent's own word on whether it protects.
    func statusPart() -> String {
        let profile = try? database.profile()
        return Pages.status(agent(), hasMessage: profile?.message != nil, now: now())
    }

    func buttonPart() -> String {
        Pages.button(agent(), now: now())
    }

    func part(_ html: String) -> WebResponse { WebResponse.html(html) }

    func page(_ session: WebSession?, _ title: String, _ body: String, status: Int = 200, nav: String? = nil, extra: [(String, String)] = []) -> WebResponse {
        WebResponse.html(Pages.layout(title: title, body: body, csrf: session?.csrf, nav: nav), status: status, extra: extra)
    }
}

/// Wrong pairing codes: five a minute from one address, twenty a minute from all of them; past
/// that every code is refused (the right one too) until the minute has passed.
struct PairingLimiter {
    static let window = 60.0, perAddress = 5, overall = 20
    var failures: [(remote: String, at: Double)] = []

    mutating func allowed(_ remote: String, now: Double) -> Bool {
        failures.removeAll { now - $0.at >= Self.window || $0.at > now }
        return failures.count < Self.overall && failures.filter { $0.remote == remote }.count < Self.perAddress
    }

    mutating func failed(_ remote: String, now: Double) {
        failures.append((remote, now))
    }
}
