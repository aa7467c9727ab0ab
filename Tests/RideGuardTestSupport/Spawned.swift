// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A child process started with posix_spawn in its own process group, stopped by signalling the
/// group and reaped with waitpid (Foundation's Process lost track of children here while another
/// one kept running).
package final class Spawned {
    private(set) var pid: pid_t = 0
    private var status: Int32 = 0

    package init(_ arguments: [String], environment: [String] = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp"],
         stdin: String = "/dev/null", stdout: String = "/dev/null", stderr: String = "/dev/null") throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, stdin == "/dev/null" ? O_RDONLY : O_RDWR, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with no signal blocked and the stop signals at their defaults: the test
        // process blocks or handles some (the agents it runs in-process catch SIGTERM), and a child
        // must stop on SIGTERM as under systemd.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t(), stops = sigset_t()
        sigemptyset(&none)
        sigemptyset(&stops)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&stops, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &stops)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(program: arguments[0], code: result) }
    }

    /// CPU time the child used (user + system), once it has exited.
    private(set) var cpuSeconds = 0.0

    /// Waits up to `seconds` for the child to exit; returns its exit code, or nil if still running.
    package func wait(_ seconds: Double) -> Int32? {
        guard pid > 0 else { return exitCode }
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            var usage = rusage()
            if wait4(pid, &status, WNOHANG, &usage) == pid {
                cpuSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                    + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
                pid = 0
                return exitCode
            }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    package var exitCode: Int32 { (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -(status & 0x7F) }

    /// SIGTERM to the child alone, as systemd stops a service; its exit code, or nil if it did not exit.
    package func terminate(within seconds: Double = 10) -> Int32? {
        guard pid > 0 else { return exitCode }
        Glibc.kill(pid, SIGTERM)
        return wait(seconds)
    }

    /// Signals the whole group and reaps the child.
    package func kill(_ signal: Int32 = SIGTERM) {
        guard pid > 0 else { return }
        Glibc.kill(-pid, signal)
        if wait(5) == nil {
            Glibc.kill(-pid, SIGKILL)
            waitpid(pid, &status, 0)
            pid = 0
        }
    }

    deinit { kill() }
}

package struct SpawnError: Error, CustomStringConvertible {
    package var program: String
    package var code: Int32
    package var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
}
