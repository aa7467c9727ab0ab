// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import RideGuardCore
import Storage
import Synchronization
import SystemCalls
import WebUI
import RideGuardConfig
import AgentControl

/// `rideguard-web`: the page for the rider's phone (`rideguard web serve` runs it; so does
/// rideguard-web.service). `WebServer` carries the requests to `WebApp`; the agent never waits on it.
@main
struct RideGuardWeb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rideguard-web",
        abstract: "Serve RideGuard's page for the rider's phone (web.listen in the configuration).")

    @Option(help: "The configuration file.")
    var config = "/etc/rideguard/config.yaml"

    func run() throws {
        let configuration: AgentConfiguration
        do {
            configuration = access(config, F_OK) == 0 ? try ConfigurationFile.load(path: config) : AgentConfiguration()
        } catch {
            log("\(error)")
            throw ExitCode(2)
        }
        guard let endpoint = configuration.web.endpoint else { throw ExitCode(2) }   // validated with the file
        // SIGTERM (systemd) and SIGINT (Ctrl-C) are waited for here, never delivered to a thread.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)

        // The database and the port are waited for on the server's thread: a stop comes through
        // while they are not there yet.
        let server = Mutex<WebServer?>(nil)
        let stopping = Atomic<Bool>(false)
        let path = config
        startThread("rg-web-serve") {
            guard let database = Self.open(configuration.database, stopping: { stopping.load(ordering: .acquiring) }) else { return }
            let app = WebApp(configurationPath: path, configuration: configuration, database: database)
            // A port taken (another server, the page already running) is tried again: the page
            // comes up once it is free.
            var said = false
            while !stopping.load(ordering: .acquiring) {
                do {
                    let serving = try WebServer(host: endpoint.host, port: endpoint.port) { request in await app.handle(request) }
                    server.withLock { $0 = serving }
                    guard !stopping.load(ordering: .acquiring) else { return }
                    log("listening on \(configuration.web.listen)" + (WebLink.base(configuration.web).map { ": \($0)" } ?? ""))
                    serving.run()
                    return
                } catch {
                    if !said { log("\(error); trying again every 5 s") }
                    said = true
                    sleep(5)
                }
            }
        }
        var received: Int32 = 0
        sigwait(&signals, &received)
        stopping.store(true, ordering: .releasing)
        server.withLock { $0 }?.stop()
        log("stopped")
    }

    /// The database, once it opens (a card not mounted yet, a folder not made yet): every 5 s; nil
    /// when stopped first.
    static func open(_ path: String, stopping: () -> Bool) -> RideGuardDatabase? {
        var said = false
        while !stopping() {
            do { return try RideGuardDatabase(path: path) } catch {
                if !said { log("cannot open the database \(path): \(error); trying again every 5 s") }
                said = true
                sleep(5)
            }
        }
        return nil
    }
}

func log(_ text: String) {
    let line = Array(("rideguard-web: " + text + "\n").utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
