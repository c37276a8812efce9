/// The release this binary belongs to, as `latchkey --version` prints it; `scripts/release` names
/// its artifact after it. Semantic versioning: a change that breaks a client, a setting or a stored
/// database raises the first number (while it is 0, the second).
enum Version {
    static let current = "0.1.0"
}
