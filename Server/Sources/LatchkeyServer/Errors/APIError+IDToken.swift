import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto

extension APIError {
    /// The answer to a refused id token: 401 with the failure's code, except an oversized nonce,
    /// which is a malformed request (400) rather than a statement about the token.
    init(_ failure: IDTokenFailure) {
        self.init(failure == .nonceTooLong ? .badRequest : .unauthorized, failure.code, failure.message)
    }
}
