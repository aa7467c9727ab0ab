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
            return .answer(page(nil, "RideGuard", "<p class=bad>\(esc(texts()(.databaseUnreadable, "\(error)")))</p>", status: 500))
        }
        let t = texts()
        guard let session else {
            return .answer(page(nil, t(.titleNotPaired), t(.notPaired), status: 401))
        }
        if request.method == "POST" {
            guard Self.sameOrigin(request), Self.equalInConstantTime(request.form["csrf"] ?? "", session.csrf) else {
                return .answer(page(session, t(.titleRefused), "<p class=bad>\(esc(t(.refusedForm)))</p>", status: 403))
            }
        } else if request.method != "GET" {
            return .answer(WebResponse(status: 405, headers: [("Allow", "GET, POST")] + WebResponse.common))
        }
        if request.path == "/checks/doctor" { return .doctor(session) }
        return .answer(route(request, session))
    }

    private func route(_ request: WebRequest, _ session: WebSession) -> WebResponse {
        let post = request.method == "POST"
        let t = texts()
        let done = request.query["done"].flatMap { Pages.done[$0] }.map { t($0) }
        switch request.path {
        case "/": return page(session, t(.navStatus), Pages.statusPage(live: statusPart(), t), nav: "/")
        case "/live/status": return part(statusPart())
        case "/contacts": return post ? changeContacts(request.form, session) : contactsPage(session, said: done)
        case "/profile": return post ? changeProfile(request.form, session) : profilePage(session, said: done)
        case "/checks": return post ? checkAction(request.form, session) : page(session, t(.navChecks), Pages.checksPage(live: buttonPart(), said: done, t), nav: "/checks")
        case "/live/button": return part(buttonPart())
        case "/journal": return journalPage(request.query, session)
        case "/recordings": return post ? recordingAction(request.form, session) : recordingsPage(session, said: nil)
        case "/recordings/file": return recordingFile(request.query["name"] ?? "", session)
        case "/recordings/report": return recordingReport(request.query["name"] ?? "", session)
        case "/card": return page(session, t(.titleRescueCard), Pages.cardPage(svg: cardSVG(), t), nav: "/card")
        case "/card.svg": return cardSVG().map { WebResponse.file(Array($0.utf8), type: "image/svg+xml", name: "rescue-card.svg") }
            ?? page(session, t(.titleRescueCard), "<p class=bad>\(esc(t(.cardTooLong)))</p>", status: 422)
        case "/forget" where post:
            _ = try? database.revokeWebSession(session.id, now: now())
            return WebResponse.redirect("/", extra: [("Set-Cookie", "\(Self.cookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")])
        default: return page(session, t(.titleNotFound), "<p>\(esc(t(.notFound))) <a href=/>\(esc(t(.navStatus)))</a></p>", status: 404)
        }
    }

    // MARK: - Pairing

    private func pair(_ request: WebRequest) -> WebResponse {
        let remote = request.remote, at = now()
        let t = texts()
        guard limiter.withLock({ $0.allowed(remote, now: at) }) else {
            return page(nil, t(.titleTooManyTries), "<p class=bad>\(esc(t(.tooManyTries)))</p>", status: 429, extra: [("Retry-After", "60")])
        }
        let code = (request.query["code"] ?? "").lowercased()
        let session: WebSession?
        do {
            session = code.count == 12 ? try database.redeemPairingCode(code, label: request.headers["user-agent"] ?? "a browser", now: at, maxIdle: maxIdle) : nil
        } catch {
            return page(nil, t(.titlePairing), "<p class=bad>\(esc(t(.pairingNotSaved, "\(error)")))</p>", status: 500)
        }
        guard let session else {
            limiter.withLock { $0.failed(remote, now: at) }
            return page(nil, t(.titlePairing), t(.badCode), status: 403)
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

    func agent(_ t: ScreenText) -> Agent {
        switch ControlClient.agentStatus(configuration.controlSocket, timeout: 3) {
        case .running(let status): return .running(status)
        case .notRunning: return .down(t(.agentNotRunning))
        case .unreachable(let reason): return .down(t(.agentUnreachable, reason))
        }
    }

    /// The rider's language (the configuration's until the rider chose one): the page's own texts.
    var language: MessageLanguage { ((try? database.profile())?.language) ?? configuration.messages.language }

    func texts() -> ScreenText { ScreenText(language) }

    /// The status, with the agent's own word on whether it protects.
    func statusPart() -> String {
        let profile = try? database.profile()
        let t = ScreenText(profile?.language ?? configuration.messages.language)
        return Pages.status(agent(t), hasMessage: profile?.message != nil, now: now(), t)
    }

    func buttonPart() -> String {
        let t = texts()
        return Pages.button(agent(t), now: now(), t)
    }

    func part(_ html: String) -> WebResponse { WebResponse.html(html) }

    func page(_ session: WebSession?, _ title: String, _ body: String, status: Int = 200, nav: String? = nil, extra: [(String, String)] = []) -> WebResponse {
        WebResponse.html(Pages.layout(title: title, body: body, csrf: session?.csrf, nav: nav, texts()), status: status, extra: extra)
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
