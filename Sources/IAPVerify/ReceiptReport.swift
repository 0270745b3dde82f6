// The outcome of one receipt verification: verdict, per-check states and what was decoded.

public enum CheckState: String, Sendable {
    case ok
    case failed
    case skipped
    case notRun = "not_run"
    /// The check was deliberately not performed (bundle_id "*").
    case notChecked = "not_checked"
}

public struct ReceiptReport: Sendable {
    /// SPEC §5 checks 2–13, in order.
    public static let checkNames = [
        "structure", "algorithm", "payload", "chain", "signer", "signature",
        "environment", "bundle_id", "bundle_version", "device", "expiration", "age",
    ]

    public var judgement = Judgement(.valid, "the receipt is signed by Apple and matches the configured app")
    public private(set) var checks: [CheckState] = Array(repeating: .notRun, count: ReceiptReport.checkNames.count)
    public var payload: ReceiptPayload?
    /// True once the whole payload was decoded: after check 7 passed, or by `inspect`. Before
    /// that only the receipt type and creation date are read, and no purchase is reported.
    public var payloadIsComplete = false
    public var digest: DigestAlgorithm?
    public var scheme: SignatureScheme?
    /// The validated path, leaf first; empty unless check 5 passed.
    public var chain: [CertificateSummary] = []
    /// What the receipt grants at the call's `now`; nil unless the verdict is valid.
    public var entitlements: EntitlementReport?

    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }
    /// Decoded fields are trusted only for a valid receipt whose signature was checked.
    public var trusted: Bool { isValid && state("signature") == .ok }

    public init() {}

    public func state(_ name: String) -> CheckState? {
        ReceiptReport.checkNames.firstIndex(of: name).map { checks[$0] }
    }

    mutating func mark(_ name: String, _ state: CheckState) {
        if let i = ReceiptReport.checkNames.firstIndex(of: name) { checks[i] = state }
    }

    /// Records the failing check and the verdict; later checks stay `not_run`.
    mutating func fail(_ check: String, _ verdict: Verdict, _ reason: String) {
        mark(check, .failed)
        judgement = Judgement(verdict, reason)
    }
}

extension ReceiptEnvironment {
    /// Maps attribute 0 (receipt_type) to an environment; unknown types map to nil.
    init?(receiptType: String?) {
        switch receiptType {
        case "Production", "ProductionVPP": self = .production
        case "ProductionSandbox", "ProductionVPPSandbox": self = .sandbox
        case "Xcode": self = .xcode
        default: return nil
        }
    }
}
