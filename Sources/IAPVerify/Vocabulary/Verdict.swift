// Verdicts: the answer about a receipt, a response or a signed token; the raw values are the
// strings results carry.

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
    // Revocation (OCSP responses the host passed)
    case revoked
    case revocationUnknown = "revocation_unknown"
    // /verifyReceipt responses
    case wrongEnvironment = "wrong_environment"
    case temporarilyUnavailable = "temporarily_unavailable"
    case configurationError = "configuration_error"
    case rejectedByApple = "rejected_by_apple"
}

/// A verdict with the sentence that explains it in logs.
public struct Judgement: Sendable, Equatable {
    public let verdict: Verdict
    public let reason: String

    /// False only for `undecided`, the state a report starts in.
    let decided: Bool

    public init(_ verdict: Verdict, _ reason: String) {
        self.init(verdict, reason, decided: true)
    }

    private init(_ verdict: Verdict, _ reason: String, decided: Bool) {
        self.verdict = verdict
        self.reason = reason
        self.decided = decided
    }

    /// Where every report starts: not valid, so a path that forgets to decide grants nothing.
    static let undecided = Judgement(.malformed, "no verdict was reached: nothing is granted", decided: false)

    var isUndecided: Bool { !decided }
}

/// What every entry point returns: a decided verdict with its reason, and the result JSON as a
/// separate rendering step. Hosts that need only the decision never render JSON.
public protocol VerificationResult: Sendable {
    var judgement: Judgement { get }
    /// The result document (see docs/results.md). Every result that is not a verdict (a token, a
    /// request, an offer signature) writes its document under the same name.
    func resultJSON() -> [UInt8]
}

extension VerificationResult {
    @available(*, deprecated, renamed: "resultJSON()", message: "one name for the result document: resultJSON()")
    public func renderJSON() -> [UInt8] { resultJSON() }

    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }
    /// Why, in one sentence (the result's `reason`).
    public var reason: String { judgement.reason }
}
