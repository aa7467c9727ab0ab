import Foundation

/// Files and folders that hold the rider's data (contact numbers, the medical note, positions) or
/// the agent's control socket: their modes are set explicitly, never left to the umask.
public enum PrivateFiles {
    /// Creates `folder` with `mode` when it is missing, and its missing parents with 0755 (never
    /// as the umask says: under umask 000 they were 0777, and another user could swap one for a
    /// folder of their own). An existing folder is left as it is. Throws the system's reason.
    public static func createFolder(_ folder: String, mode: mode_t = 0o750) throws(PrivateFileError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        guard errno == ENOENT else { throw PrivateFileError(path: folder, reason: String(cString: strerror(errno))) }
        let parent = (folder as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != folder { try createFolder(parent, mode: 0o755) }
        guard mkdir(folder, mode) == 0 || errno == EEXIST else {
            throw PrivateFileError(path: folder, reason: "cannot create the folder: \(String(cString: strerror(errno)))")
        }
        guard chmod(folder, mode) == 0 else { throw PrivateFileError(path: folder, reason: String(cString: strerror(errno))) }
    }

    /// Makes sure `path` exists with mode 0600, creating it empty if needed, and tightens it and the
    /// SQLite side files next to it (`-journal`, `-wal`, `-shm`, which SQLite creates with the
    /// database's own mode) when others could read them. Returns what was tightened, e.g.
    /// "x.db from 0644 to 0600".
    public static func protectDatabase(_ path: String) throws(PrivateFileError) -> [String] {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw PrivateFileError(path: path, reason: String(cString: strerror(errno))) }
            return []
        }
        guard errno == EEXIST else { throw PrivateFileError(path: path, reason: "cannot create: \(String(cString: strerror(errno)))") }
        var tightened: [String] = []
        for file in [path, path + "-journal", path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o077 != 0 else { continue }
            let before = String(info.st_mode & 0o7777, radix: 8)
            guard chmod(file, 0o600) == 0 else {
                throw PrivateFileError(path: file, reason: "readable by others (mode 0\(before)) and cannot be tightened: \(String(cString: strerror(errno)))")
            }
            tightened.append("\(file) from 0\(before) to 0600")
        }
        return tightened
    }
}

public struct PrivateFileError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}
