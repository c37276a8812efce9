import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading the file a `NAME_FILE` setting names.
enum SettingFile {
    /// At most this much is read: a secret or a URL, never a large file named by mistake.
    static let limit = 1 << 20

    /// The descriptor a path names when it means one the process inherited: `-`, `/dev/stdin`,
    /// `/dev/fd/N`, `/proc/self/fd/N`. Such a path must be read from the descriptor, not opened:
    /// opening it goes through `/proc`, which checks the pipe's owner, and a command run under
    /// `runuser`/`sudo -u` as another user was refused the pipe its operator's shell made.
    static func inheritedDescriptor(_ path: String) -> Int32? {
        switch path {
        case "-", "/dev/stdin": return 0
        default:
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                return Int32(path.dropFirst(prefix.count)).flatMap { $0 >= 0 ? $0 : nil }
            }
            return nil
        }
    }

    /// The contents of a `NAME_FILE`: a regular file, or an inherited descriptor such as standard
    /// input (an operator hands a command the key-encryption key that way, from a file only root
    /// reads, without it touching a command line or the environment). At most 1 MiB.
    /// - Throws: `ConfigurationError` naming the setting and the path, never the contents.
    static func read(_ path: String, name: String) throws -> String {
        let data: Data
        if let descriptor = inheritedDescriptor(path) {
            data = try readInherited(descriptor, path: path, name: name)
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                let reason = FileManager.default.fileExists(atPath: path) ? "no permission to read it" : "no such file"
                throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(reason)")
            }
            defer { try? handle.close() }
            do {
                data = try handle.read(upToCount: limit + 1) ?? Data()
            } catch {
                throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(error.localizedDescription)")
            }
        }
        // Cut silently, a secret would be wrong in a way nothing reports.
        guard data.count <= limit else {
            throw ConfigurationError("\(name)_FILE '\(path)' is longer than 1 MiB: not a secret or a setting")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(name)_FILE '\(path)' is not UTF-8 text")
        }
        return text
    }

    /// Reads an inherited descriptor to its end through a duplicate, so the descriptor itself
    /// stays open (and standard input stays standard input).
    private static func readInherited(_ descriptor: Int32, path: String, name: String) throws -> Data {
        // A terminal would wait for typing the operator does not know is expected.
        if isatty(descriptor) == 1 {
            throw ConfigurationError(
                "\(name)_FILE is '\(path)', a terminal: pipe the secret in (`cat FILE | latchkey …`)")
        }
        let copy = dup(descriptor)
        guard copy >= 0 else {
            throw ConfigurationError(
                "cannot read \(name)_FILE '\(path)': descriptor \(descriptor) is not open (\(String(cString: strerror(errno))))"
            )
        }
        let handle = FileHandle(fileDescriptor: copy, closeOnDealloc: true)
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(error.localizedDescription)")
        }
        // An empty pipe is a command before it that failed (`sudo cat` of a file it could not
        // read), not a setting left unset on purpose: say so, rather than "none is set".
        guard !data.isEmpty else {
            throw ConfigurationError(
                "\(name)_FILE is '\(path)', and nothing came through it: did the command piping the secret fail?")
        }
        return data
    }
}
