// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import QRCode
import RideGuardAgent
import RideGuardCore
import Storage
import SystemCalls
import SystemPackage
import AgentControl
import SystemTime

struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The page for the rider's phone: serve it, pair a phone, list or revoke paired phones.",
        discussion: "The page runs as its own service: sudo systemctl enable --now rideguard-web (docs/rider.md, From your phone).",
        subcommands: [Serve.self, Pair.self, Sessions.self], defaultSubcommand: Serve.self)

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve the page (rideguard-web.service runs this), on web.listen.")
        @OptionGroup var file: ConfigurationOption

        /// The server is its own program next to this one (it links Foundation, which the agent does not).
        func run() throws {
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink("/proc/self/exe", &target, Int(PATH_MAX))
            let me = length > 0 ? String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/usr/bin/rideguard"
            let server = FilePath(me).removingLastComponent().appending("rideguard-web").string
            let arguments = ["rideguard-web", "--config", file.config]
            var argv = arguments.map { strdup($0) } + [nil]
            execv(server, &argv)
            Output.error("cannot start \(server): \(String(cString: strerror(errno)))")
            throw ExitCode(2)
        }
    }

    struct Pair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a one-time link (and its QR code) that pairs a phone with the page: valid 10 minutes, once.")
        @OptionGroup var db: DatabaseOption

        func run() throws {
            let web = try db.configuration.load().web
            guard let base = WebLink.base(web) else {
                Output.error("the Pi has no network address yet: join a Wi-Fi (or start its hotspot), or set web.address in the configuration")
                throw ExitCode(1)
            }
            let code = try refusing {
                do { return try db.open().newPairingCode(now: Date().timeIntervalSince1970) } catch let error as RecordError { throw error } catch {
                    throw RecordError(reason: "cannot save the code: \(error)")
                }
            }
            let link = "\(base)/pair?code=\(code)"
            Output.line("Open this on the rider's phone (on the same Wi-Fi as the Pi), within 10 minutes; it works once:\n\n  \(link)\n")
            if let qr = try? QRCode.encode(link) { Output.line(RescueCard.terminal(qr), terminator: "") }
            if !WebLink.isServing(web) {
                Output.error("the page is not running: sudo systemctl enable --now rideguard-web")
            }
        }
    }

    struct Sessions: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The paired phones; --revoke ID unpairs one, --revoke-all every one.")
        @OptionGroup var db: DatabaseOption
        @Option(help: "Unpair the phone with this session id.") var revoke: Int64?
        @Flag(help: "Unpair every phone.") var revokeAll = false

        func run() throws {
            let database = try db.open()
            let now = Date().timeIntervalSince1970
            if let revoke {
                guard try database.revokeWebSession(revoke, now: now) else {
                    Output.error("no session \(revoke): rideguard web sessions lists them")
                    throw ExitCode(1)
                }
                Output.line("session \(revoke) revoked: that phone must pair again")
                return
            }
            if revokeAll {
                let sessions = try database.webSessions()
                for session in sessions { try database.revokeWebSession(session.id, now: now) }
                Output.line("\(sessions.count) session(s) revoked")
                return
            }
            let sessions = try database.webSessions()
            if sessions.isEmpty { Output.line("no phone paired: rideguard web pair") }
            for s in sessions {
                Output.line("\(s.id)  paired \(Times.iso8601(s.created))  last seen \(Times.iso8601(s.lastSeen))  \(s.label)")
            }
        }
    }
}
