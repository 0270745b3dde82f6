// The words for where a purchase comes from and how a call is asked to treat it, shared by every
// folder: environments, the /verifyReceipt host, the config's policy choices, the crypto path.

/// Where a receipt was issued, as the accept-set names it.
public enum ReceiptEnvironment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
}

/// When to check the receipt's device hash (attribute 5).
public enum DeviceCheckPolicy: String, Sendable {
    case ifGiven = "if_given"
    case required
    case off
}

public enum GracePeriodPolicy: String, Sendable {
    case honor
    case ignore
}

/// Which /verifyReceipt host answered.
public enum AppleEndpoint: String, Sendable {
    case production, sandbox
}

/// How checks 2–7 are carried out. `.reference` exists so that the fast path can always be
/// checked against OpenSSL's own PKCS7_verify; hosts never choose it.
@_spi(Testing)
public enum CryptoPath: Sendable {
    /// Own DER walk, verified-chain cache, one signature verification per call.
    case cached
    /// d2i_PKCS7 + PKCS7_verify with a per-call store, then the same marker policy.
    case reference
}
