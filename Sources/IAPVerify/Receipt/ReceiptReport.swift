// The outcome of one receipt verification: verdict, per-check states and what was decoded.

/// The receipt checks 2–13, in order. An enum, so a mistyped check does not compile.
public enum ReceiptCheck: String, CaseIterable, Sendable, RequiredCheck {
    case structure, algorithm, payload, chain, signer, signature, environment
    case bundleID = "bundle_id"
    case bundleVersion = "bundle_version"
    case device, expiration, age
}

public struct ReceiptReport: Sendable {
    /// Undecided until the last check passes or one fails; an undecided report is never valid.
    private var gate = CheckGate<ReceiptCheck>()
    public var judgement: Judgement { gate.judgement }
    /// Each check's state, in `ReceiptCheck` order.
    public var checks: [CheckState] { gate.states }
    public internal(set) var payload: ReceiptPayload?
    /// True once the whole payload was decoded: after check 7 passed, or by `inspect`. Before
    /// that only the receipt type and creation date are read, and no purchase is reported.
    public internal(set) var payloadIsComplete = false
    public internal(set) var digest: DigestAlgorithm?
    public internal(set) var scheme: SignatureScheme?
    /// The validated path, leaf first; empty unless check 5 passed.
    public internal(set) var chain: [CertificateSummary] = []
    /// `chain` as written by the cached chain it came from (nil: write it here).
    var chainJSON: [UInt8]?
    /// OCSP facts of the signing certificate (nil until the chain verified).
    public internal(set) var revocation: RevocationReport?
    /// What the receipt grants at the call's `now`; nil unless the verdict is valid.
    public internal(set) var entitlements: EntitlementReport?

    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }
    /// Decoded fields are trusted only for a valid receipt whose signature was checked.
    public var trusted: Bool { isValid && state(.signature) == .ok }

    public init() {}

    public func state(_ check: ReceiptCheck) -> CheckState { gate.state(check) }

    mutating func mark(_ check: ReceiptCheck, _ state: CheckState) { gate.mark(check, state) }

    /// Records the failing check and the verdict; later checks stay `not_run`.
    mutating func fail(_ check: ReceiptCheck, _ verdict: Verdict, _ reason: String) { gate.fail(check, verdict, reason) }

    /// Valid only through the gate: every check ran and none failed.
    mutating func pass(_ reason: String) { gate.pass(reason) }
}
