/// The JSON body of every error: `{"error": {"code": "...", "message": "..."}}`.
public struct ErrorBody: Codable, Sendable, Equatable {
    /// The error itself.
    public struct Detail: Codable, Sendable, Equatable {
        /// Stable, machine-readable code.
        public var code: ErrorCode
        /// Human-readable explanation, safe to show to developers; never contains secrets.
        public var message: String
        /// Creates a detail.
        public init(code: ErrorCode, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// The error.
    public var error: Detail

    /// Creates an error body.
    public init(code: ErrorCode, message: String) {
        self.error = Detail(code: code, message: message)
    }
}
