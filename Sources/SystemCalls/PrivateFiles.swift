// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import SystemPackage

/// Files and folders that hold the rider's data (contact numbers, the medical note, positions) or
/// the agent's control socket: their modes are set explicitly, never left to the umask.
package enum PrivateFiles {
    /// Creates `folder` with `mode` when it is missing, and its missing parents with 0755 (never
    /// as the umask says: under umask 000 they were 0777, and another user could swap one for a
    /// folder of their own). An existing folder is left as it is. Throws the system's reason.
    package static func createFolder(_ folder: String, mode: mode_t = 0o750) throws(PrivateFileError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        guard errno == ENOENT else { throw PrivateFileError(path: folder, reason: String(cString: strerror(errno))) }
        let parent = FilePath(folder).removingLastComponent().string
        if !parent.isEmpty && parent != folder { try createFolder(parent, mode: 0o755) }
        guard mkdir(folder, mode) == 0 || errno == EEXIST else {
            throw PrivateFileError(path: folder, reason: "cannot create the folder: \(String(cString: strerror(errno)))")
        }
        guard chmod(folder, mode) == 0 else { throw PrivateFileError(path: folder, reason: String(cString: strerror(errno))) }
    }

    /// The first folder on the way to `path` (itself included when it is a folder) that a user
    /// other than root and us could replace, with why; nil when there is none. A folder is safe
    /// when it belongs to root or to us and neither its group nor others may write to it, or when
    /// it is sticky and root's (/tmp: others may add their own names, not replace ours). Links on
    /// the way are followed (/var/run is one) and the folders they lead to are checked.
    /// `anyOwnerOfLast`: the folder holding `path` may belong to another user (a client of the
    /// agent's socket trusts the service user who owns /run/rideguard), its parents may not.
    package static func replaceableFolder(on path: String, anyOwnerOfLast: Bool = false) -> String? {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var folder = FilePath(absolute).removingLastComponent().string
        var info = stat()
        if stat(absolute, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { folder = absolute }
        guard let resolved = realpath(folder, nil) else { return nil }     // missing: created safely later
        defer { free(resolved) }
        var current = ""
        let components = [""] + String(cString: resolved).split(separator: "/").map(String.init)
        for (index, component) in components.enumerated() {
            current = component.isEmpty ? "/" : (current == "/" ? "" : current) + "/" + component
            guard stat(current, &info) == 0 else { return nil }
            let mode = info.st_mode
            let owned = info.st_uid == 0 || info.st_uid == geteuid() || (anyOwnerOfLast && index == components.count - 1)
            let writableByOthers = mode & (S_IWGRP | S_IWOTH) != 0
            let stickyRoot = mode & S_ISVTX != 0 && info.st_uid == 0
            if !owned {
                return "\(current) belongs to user \(info.st_uid), who could replace what is inside"
            }
            if writableByOthers && !stickyRoot {
                return "\(current) is writable by \(mode & S_IWOTH != 0 ? "every user" : "its group") (mode 0\(String(mode & 0o7777, radix: 8))), who could replace what is inside"
            }
        }
        return nil
    }

    /// Why a file the agent trusts (a CA that says who the broker is, a password, a key) could have
    /// been put there or changed by another user: a folder on the way they could replace, or the
    /// file itself theirs or writable by them; nil when only root or we could have. A CA planted by
    /// someone else would let them stand in for the fleet's broker and forge its commands.
    package static func untrusted(_ path: String) -> String? {
        if let folder = replaceableFolder(on: path) { return folder }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }        // missing: the reader says so
        if info.st_uid != 0 && info.st_uid != geteuid() { return "\(path) belongs to user \(info.st_uid)" }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return "\(path) is writable by \(info.st_mode & S_IWOTH != 0 ? "every user" : "its group") (mode 0\(String(info.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Makes sure `path` exists with mode 0660 (its owner and its group: the agent and `rideguard
    /// web`), creating it empty if needed, and sets it and the SQLite side files next to it
    /// (`-journal`, `-wal`, `-shm`, which SQLite creates with the database's own mode) to 0660 when
    /// they differ. Returns what others could read and was tightened, e.g. "x.db from 0644 to 0660".
    package static func protectDatabase(_ path: String) throws(PrivateFileError) -> [String] {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o660)
        if fd >= 0 {
            defer { close(fd) }
            guard fchmod(fd, 0o660) == 0 else { throw PrivateFileError(path: path, reason: String(cString: strerror(errno))) }
            return []
        }
        // An existing file on a read-only filesystem (EROFS) is opened all the same: the agent protects, degraded.
        var existing = stat()
        guard errno == EEXIST || (errno == EROFS && lstat(path, &existing) == 0) else {
            throw PrivateFileError(path: path, reason: "cannot create: \(String(cString: strerror(errno)))")
        }
        var tightened: [String] = []
        for file in [path, path + "-journal", path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o7777 != 0o660 else { continue }
            let before = String(info.st_mode & 0o7777, radix: 8)
            let othersCould = info.st_mode & 0o007 != 0
            // Not ours to change (another user's file, a read-only card): only what others could read is an error.
            guard chmod(file, 0o660) == 0 else {
                if othersCould {
                    throw PrivateFileError(path: file, reason: "readable by others (mode 0\(before)) and cannot be tightened: \(String(cString: strerror(errno)))")
                }
                continue
            }
            if othersCould { tightened.append("\(file) from 0\(before) to 0660") }
        }
        return tightened
    }
}

package struct PrivateFileError: Error, CustomStringConvertible, Sendable {
    package var path: String
    package var reason: String
    package var description: String { "\(path): \(reason)" }

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}
