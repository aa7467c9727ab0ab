// SPDX-License-Identifier: Apache-2.0
import Foundation
import Storage
import SystemCalls
import RideGuardTestSupport
import Testing
@testable import RideGuardAgent
@testable import AgentControl

/// Nothing readable or reachable that should not be: the control socket and the database, whatever
/// the umask, and a control socket that one silent client cannot hold up.
@Suite(.serialized) struct PermissionTests {
    /// A folder for one test: mode 0755 set explicitly, so other users can reach what is inside
    /// it unless the agent itself keeps them out.
    static func openFolder(_ name: String) throws -> URL {
        try Scratch.folder(name, mode: 0o755)
    }

    /// Everything simulated; the run folder and the database's folder do not exist yet.
    static func configuration(in folder: URL, socket: String? = nil) throws -> (config: String, database: String, socket: String) {
        let database = folder.appendingPathComponent("state/rideguard.sqlite").path
        let socket = socket ?? folder.appendingPathComponent("run/control.sock").path
        let config = folder.appendingPathComponent("config.yaml").path
        let yaml = """
            imu:
              simulated: true
              trace: \(Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path)
              speed: 0.2
            gpio:
              simulated: true
            gps:
              simulated: true
            modem:
              simulated: true
            database: \(database)
            control_socket: \(socket)
            """
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: config))
        return (config, database, socket)
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// A throwaway system user, removed by `remove()`.
    struct ThrowawayUser {
        let name = "rgprobe\(UInt32.random(in: 10000...99999))"

        init() throws {
            let made = try Spawned(["/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
            #expect(made.wait(30) == 0, "useradd \(name)")
        }

        func remove() { _ = try? Spawned(["/usr/sbin/userdel", name]).wait(30) }

        /// Runs Debian's python3 as this user; its standard output.
        func python(_ script: String, _ arguments: [String] = [], output: URL) throws -> Spawned {
            try Spawned(["/usr/sbin/runuser", "-u", name, "--", "/usr/bin/python3", "-c", script] + arguments,
                        stdout: output.path, stderr: output.path + ".err")
        }
    }

    /// Connects to the socket again and again for `seconds`; prints how often it got in, was
    /// refused, or found nothing yet.
    static let racer = """
        import json, socket, sys, time
        path, until = sys.argv[1], time.time() + float(sys.argv[2])
        counts = {"connected": 0, "denied": 0, "missing": 0}
        while time.time() < until:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                counts["connected"] += 1
            except PermissionError:
                counts["denied"] += 1
            except (FileNotFoundError, ConnectionRefusedError):
                counts["missing"] += 1
            finally:
                s.close()
            time.sleep(0.001)
        print(json.dumps(counts))
        """

    @Test(.enabled(if: geteuid() == 0, "needs root to start the agent as root and make a throwaway user"))
    func startedAsRootUnderUmask000AnotherUserReachesNothing() throws {
        let folder = try Self.openFolder("umask")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (config, database, socket) = try Self.configuration(in: folder)
        let user = try ThrowawayUser()
        defer { user.remove() }
        // The other user knocks from before the agent starts until well after its socket exists.
        let knocks = folder.appendingPathComponent("knocks.json")
        let racer = try user.python(Self.racer, [socket, "8"], output: knocks)
        let agent = try Spawned(["/bin/sh", "-c", "umask 000; exec \(Rideguard.binary.path) run --config \(config)"],
                                stdout: folder.appendingPathComponent("agent.out").path)
        defer { agent.kill(SIGTERM) }
        try waitFor(20) { (try? Rideguard.run(["status", "--json", "--socket", socket]).status) == 0 }

        #expect(Self.mode((socket as NSString).deletingLastPathComponent) == 0o750, "the run folder")
        #expect(Self.mode(socket) == 0o660, "the socket")
        #expect(Self.mode((database as NSString).deletingLastPathComponent) == 0o770, "the database's folder: the service's group (the web page) too")
        #expect(Self.mode(database) == 0o660, "the database: its owner and the service's group")
        #expect(try Rideguard.run(["status", "--socket", socket]).stdout.contains("state:"), "root still gets status")

        #expect(racer.wait(30) == 0)
        let counts = (try? JSONSerialization.jsonObject(with: Data(contentsOf: knocks))) as? [String: Int] ?? [:]
        #expect(counts["connected"] == 0, "another user connected to the control socket: \(counts)")
        #expect((counts["denied"] ?? 0) > 0, "the socket was never even tried: \(counts)")

        let reader = try user.python("""
            import sys
            try:
                open(sys.argv[1], "rb").read(16); print("read")
            except PermissionError:
                print("denied")
            """, [database], output: folder.appendingPathComponent("read.txt"))
        #expect(reader.wait(30) == 0)
        #expect(try String(contentsOf: folder.appendingPathComponent("read.txt"), encoding: .utf8) == "denied\n")
    }

    /// The database's folder is the group's to write (the page, rideguard-web, is in it): a link
    /// one of them plants as SQLite's journal is not followed by root's command line, whose write
    /// is refused with the reason; what the link points at is untouched.
    @Test func aLinkPlantedAsTheJournalIsNotFollowed() throws {
        let folder = try Self.openFolder("journal-link")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("state/rideguard.sqlite").path
        #expect(try Rideguard.run(["contacts", "add", "Sam", "+33612345678", "--database", database]).status == 0)
        #expect(Self.mode((database as NSString).deletingLastPathComponent) == 0o770)
        let precious = folder.appendingPathComponent("precious").path
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: precious))
        #expect(symlink(precious, database + "-journal") == 0)
        let refused = try Rideguard.run(["contacts", "add", "Jo", "+4915112345678", "--database", database])
        #expect(refused.status != 0 && refused.stderr.contains("unable to open"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "precious\n")
    }

    @Test func aDatabaseOthersCouldReadIsTightenedAndTheJournalSaysSo() throws {
        let folder = try Self.openFolder("tighten")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("rideguard.sqlite").path
        #expect(try Rideguard.run(["contacts", "add", "Sam", "+33612345678", "--database", database]).status == 0)
        #expect(Self.mode(database) == 0o660, "created 0660 whatever the umask")
        chmod(database, 0o644)                          // as an older version under umask 022 left it
        _ = FileManager.default.createFile(atPath: database + "-journal", contents: nil)
        chmod(database + "-journal", 0o664)
        #expect(try Rideguard.run(["contacts", "list", "--database", database]).stdout.contains("Sam"))
        #expect(Self.mode(database) == 0o660)
        #expect(Self.mode(database + "-journal").map { $0 & 0o007 } ?? 0 == 0, "SQLite's side file")
        let journal = try Rideguard.run(["events", "--kind", "system", "--database", database]).stdout
        #expect(journal.contains("database: tightened \(database) from 0644 to 0660"), "\(journal)")
    }

    @Test func aSocketFolderEveryoneMayWriteToIsRefusedAndDetectionGoesOn() throws {
        let folder = try Self.openFolder("open-run")
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = folder.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        chmod(run.path, 0o777)
        let (config, database, socket) = try Self.configuration(in: folder, socket: run.appendingPathComponent("control.sock").path)
        let output = folder.appendingPathComponent("agent.out")
        let agent = try Spawned([Rideguard.binary.path, "run", "--config", config], stdout: output.path)
        defer { agent.kill(SIGTERM) }
        try waitFor(20) {
            (try? Rideguard.run(["events", "--kind", "system", "--database", database]).stdout.contains("refusing to listen")) == true
        }
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(agent.wait(1) == nil, "the agent keeps running without its control socket")
        let said = try String(contentsOf: output, encoding: .utf8)
        #expect(said.contains("writable by every user (mode 0777)") && said.contains("detection goes on"), "\(said)")
    }

    /// Issue 26, point 7: a folder on the way to the socket (not only the socket's own) that
    /// another user could replace: the agent will not listen below it, and root's `rideguard status`
    /// will not talk to what is there.
    @Test func aSocketBelowAFolderAnotherUserCouldReplaceIsRefused() throws {
        let folder = try Self.openFolder("open-parent")
        defer { try? FileManager.default.removeItem(at: folder) }
        let open = folder.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open.appendingPathComponent("run"), withIntermediateDirectories: true)
        chmod(open.path, 0o777)
        chmod(open.appendingPathComponent("run").path, 0o750)
        let (config, database, socket) = try Self.configuration(in: folder, socket: open.appendingPathComponent("run/control.sock").path)
        let agent = try Spawned([Rideguard.binary.path, "run", "--config", config])
        defer { agent.kill(SIGTERM) }
        try waitFor(20) {
            (try? Rideguard.run(["events", "--kind", "system", "--database", database]).stdout.contains("refusing to listen")) == true
        }
        let events = try Rideguard.run(["events", "--kind", "system", "--database", database]).stdout
        #expect(events.contains("\(open.path) is writable by every user (mode 0777)"), "\(events)")
        #expect(!FileManager.default.fileExists(atPath: socket))
        let status = try Rideguard.run(["status", "--socket", socket])
        #expect(status.status != 0 && status.stderr.contains("refusing to connect: \(open.path) is writable by every user"), "\(status.stderr)")
        #expect(PrivateFiles.replaceableFolder(on: "/tmp/x") == nil, "/tmp is sticky and root's")
    }

    @Test func aSilentClientHoldsUpNobody() throws {
        let folder = try Self.openFolder("silent")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (config, _, socket) = try Self.configuration(in: folder)
        let agent = try Spawned([Rideguard.binary.path, "run", "--config", config])
        defer { agent.kill(SIGTERM) }
        try waitFor(20) { (try? Rideguard.run(["status", "--json", "--socket", socket]).status) == 0 }

        let silent = try UnixClient(socket)
        let status = try Rideguard.run(["status", "--json", "--socket", socket])
        #expect(status.status == 0 && status.stdout.contains("\"state\""))
        #expect(silent.stillOpen, "the silent client was dropped before the status client was served: served one after the other")
        // Its deadline passes: it is told why and let go.
        #expect(silent.readLine(seconds: 5)?.contains("no request within") == true)

        // Twenty silent clients at once (root's, here) leave room for status.
        let crowd = try (0..<20).map { _ in try UnixClient(socket) }
        usleep(200_000)
        let busy = try Rideguard.run(["status", "--json", "--socket", socket])
        #expect(busy.status == 0 && busy.stdout.contains("\"state\""), "\(busy.stdout) \(busy.stderr)")
        withExtendedLifetime(crowd) {}
    }

    /// Issue 26, point 8: a member of the socket's group keeps 20 silent connections open, opening
    /// a new one each time one is let go. They get 8 slots, the rest are told "busy"; root's
    /// `status` is answered all along.
    @Test(.enabled(if: geteuid() == 0, "needs root to make a throwaway user"))
    func twentySilentClientsOfAGroupMemberKeepRootOut() throws {
        let folder = try Self.openFolder("crowd")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (config, _, socket) = try Self.configuration(in: folder)
        let agent = try Spawned([Rideguard.binary.path, "run", "--config", config])
        defer { agent.kill(SIGTERM) }
        try waitFor(20) { (try? Rideguard.run(["status", "--json", "--socket", socket]).status) == 0 }
        let user = try ThrowawayUser()
        defer { user.remove() }
        let group = try #require(getpwnam(user.name)).pointee.pw_gid
        #expect(chown((socket as NSString).deletingLastPathComponent, UInt32.max, group) == 0 && chown(socket, UInt32.max, group) == 0)

        let counts = folder.appendingPathComponent("crowd.json")
        let crowd = try user.python("""
            import json, select, socket, sys, time
            path, n, until = sys.argv[1], int(sys.argv[2]), time.time() + float(sys.argv[3])
            conns, told = [], {"busy": 0, "timed_out": 0}
            while time.time() < until:
                while len(conns) < n:
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); conns.append(s)
                for s in select.select(conns, [], [], 0.05)[0]:
                    told["busy" if b"busy" in s.recv(4096) else "timed_out"] += 1
                    conns.remove(s); s.close()
            print(json.dumps(told))
            """, [socket, "20", "6"], output: counts)
        sleep(1)
        for _ in 0..<8 {
            let status = try Rideguard.run(["status", "--json", "--socket", socket])
            #expect(status.status == 0 && status.stdout.contains("\"state\""), "\(status.stdout) \(status.stderr)")
            usleep(500_000)
        }
        #expect(crowd.wait(30) == 0)
        let told = (try? JSONSerialization.jsonObject(with: Data(contentsOf: counts))) as? [String: Int] ?? [:]
        #expect((told["busy"] ?? 0) > 100, "\(told)")
        #expect((told["timed_out"] ?? 0) >= 8, "\(told)")
    }
}

/// A raw client of the control socket that sends nothing unless asked.
final class UnixClient {
    let fd: Int32

    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in Array(path.utf8).enumerated() { raw[i] = b } }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }

    /// The agent has neither answered nor hung up yet.
    var stillOpen: Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK)) < 0 && errno == EAGAIN
    }

    /// The first line the agent sends within `seconds`, or nil.
    func readLine(seconds: Double) -> String? {
        var text: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var chunk = [UInt8](repeating: 0, count: 512)
        while !text.contains(0x0A), Date() < deadline {
            var wait = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&wait, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            text += chunk[0..<n]
        }
        return text.isEmpty ? nil : String(decoding: text, as: UTF8.self)
    }
}

/// The control socket's slots, as a policy: per user, in all, and kept for root.
@Suite struct ControlSlotsTests {
    @Test func aUsersSilentClientsFillOnlyTheirOwnSlots() {
        var slots = ControlSlots()
        let member: uid_t = 4242, other: uid_t = 4343
        for _ in 0..<ControlSlots.perUser { #expect(slots.take(member) == nil) }
        #expect(slots.take(member)?.contains("already has 8 connections") == true)
        #expect(slots.take(other) == nil)
        slots.release(member)
        #expect(slots.take(member) == nil, "a slot let go is free again")
    }

    @Test func theLastSlotsAreKeptForRoot() {
        var slots = ControlSlots()
        // Seven users with 8 each: 56, all that others may hold.
        for user in uid_t(5000)..<5007 { for _ in 0..<ControlSlots.perUser { #expect(slots.take(user) == nil) } }
        #expect(slots.take(6000)?.contains("56 clients are already connected") == true)
        for _ in 0..<ControlSlots.reserved { #expect(slots.take(0) == nil) }
        #expect(slots.take(0) != nil, "64 in all")
    }
}
