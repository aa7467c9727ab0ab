import ArgumentParser
import FlyingFox
import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import WebUI

/// `rideguard-web`: the page for the rider's phone (`rideguard web serve` runs it; so does
/// rideguard-web.service). FlyingFox carries the requests to `WebApp`; the agent never waits on it.
@main
struct RideGuardWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rideguard-web",
        abstract: "Serve RideGuard's page for the rider's phone (web.listen in the configuration).")

    @Option(help: "The configuration file.")
    var config = "/etc/rideguard/config.yaml"

    func run() async throws {
        let configuration: AgentConfiguration
        do {
            configuration = FileManager.default.fileExists(atPath: config) ? try ConfigurationFile.load(path: config) : AgentConfiguration()
        } catch {
            log("\(error)")
            throw ExitCode(2)
        }
        guard let endpoint = configuration.web.endpoint else { throw ExitCode(2) }   // validated with the file
        let database = await Self.open(configuration.database)
        let app = WebApp(configurationPath: config, configuration: configuration, database: database)
        let address = try sockaddr_in.inet(ip4: endpoint.host, port: UInt16(endpoint.port))
        let server = HTTPServer(address: address, timeout: 30, logger: .disabled, handler: Carrier(app: app))
        let stop = DispatchSource.makeSignalSource(signal: SIGTERM)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
        let stopping = Task { await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            stop.setEventHandler { done.resume(); stop.cancel(); interrupt.cancel() }
            interrupt.setEventHandler { done.resume(); stop.cancel(); interrupt.cancel() }
            stop.resume()
            interrupt.resume()
        } }
        let serving = Task {
            // A port taken (another server, the page already running) is tried again: the page
            // comes up once it is free.
            var said = false
            while !Task.isCancelled {
                do {
                    try await server.run()
                    return
                } catch {
                    if !said { log("cannot listen on \(configuration.web.listen): \(error); trying again every 5 s") }
                    said = true
                    try? await Task.sleep(for: .seconds(5))
                }
            }
        }
        Task {
            try? await server.waitUntilListening(timeout: 3600)
            log("listening on \(configuration.web.listen)" + (WebLink.base(configuration.web).map { ": \($0)" } ?? ""))
        }
        await stopping.value
        serving.cancel()
        await server.stop(timeout: 2)
        log("stopped")
    }

    /// The database, once it opens (a card not mounted yet, a folder not made yet): every 5 s.
    static func open(_ path: String) async -> RideGuardDatabase {
        var said = false
        while true {
            do { return try RideGuardDatabase(path: path) } catch {
                if !said { log("cannot open the database \(path): \(error); trying again every 5 s") }
                said = true
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }
}

func log(_ text: String) {
    FileHandle.standardError.write(Data(("rideguard-web: " + text + "\n").utf8))
}

/// One request from FlyingFox to the pages and back.
struct Carrier: HTTPHandler {
    let app: WebApp
    static let maximumBody = 64 << 10

    func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
        if let length = headers["content-length"].flatMap(Int.init), length > Self.maximumBody {
            return HTTPResponse(statusCode: HTTPStatusCode(413, phrase: "Content Too Large"))
        }
        // The page's forms always say their length: a body without one is not read at all.
        if request.method == .POST && headers["content-length"] == nil {
            return HTTPResponse(statusCode: HTTPStatusCode(411, phrase: "Length Required"))
        }
        let body = request.method == .POST ? Array(try await request.bodyData.prefix(Self.maximumBody)) : []
        let remote: String = switch request.remoteAddress {
        case .ip4(let address, _)?, .ip6(let address, _)?: address
        default: "unknown"
        }
        // The query as it came, decoded as the forms are (a GET form writes a space as +).
        let query = WebRequest.fields(request.target.query(percentEncoded: true))
        let answer = await app.handle(WebRequest(method: request.method.rawValue, path: request.path, query: query, headers: headers,
                                                  body: body, remote: remote))
        var out = HTTPHeaders()
        for (name, value) in answer.headers { out.addValue(value, for: HTTPHeader(name)) }
        let status = HTTPStatusCode(answer.status, phrase: Self.phrases[answer.status] ?? "Status")
        if let file = answer.file {
            return HTTPResponse(statusCode: status, headers: out, body: try HTTPBodySequence(file: URL(fileURLWithPath: file), suggestedBufferSize: 64 << 10))
        }
        return HTTPResponse(statusCode: status, headers: out, body: Data(answer.body))
    }

    static let phrases = [200: "OK", 303: "See Other", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                          405: "Method Not Allowed", 409: "Conflict", 422: "Unprocessable Content", 429: "Too Many Requests",
                          500: "Internal Server Error", 503: "Service Unavailable"]
}
