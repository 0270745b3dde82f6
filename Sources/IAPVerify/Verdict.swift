// Verdicts: the answer about a receipt. Their raw values are the exact strings of SPEC §5.

/// The outcome of a verification. Only `.valid` grants anything.
public enum Verdict: String, Sendable, CaseIterable {
    case valid
    case malformed
    case unsupportedAlgorithm = "unsupported_algorithm"
    case untrustedChain = "untrusted_chain"
    case notAppleSigner = "not_apple_signer"
    case signatureInvalid = "signature_invalid"
    case environmentRejected = "environment_rejected"
    case bundleMismatch = "bundle_mismatch"
    case versionMismatch = "version_mismatch"
    case deviceMismatch = "device_mismatch"
    case receiptExpired = "receipt_expired"
    case stale
    // /verifyReceipt responses (SPEC §6)
    case wrongEnvironment = "wrong_environment"
    case temporarilyUnavailable = "temporarily_unavailable"
    case configurationError = "configuration_error"
    case rejectedByApple = "rejected_by_apple"
}

/// A verdict with the sentence that explains it in logs.
public struct Judgement: Sendable, Equatable {
    public let verdict: Verdict
    public let reason: String

    public init(_ verdict: Verdict, _ reason: String) {
        self.verdict = verdict
        self.reason = reason
    }
}
