// The verifier: an immutable object built once from a config and shared by any number of
// threads. It owns the trust anchors and the verified-chain cache; every call is independent.

public final class Verifier: Sendable {
    public let config: VerifierConfig
    let anchors: TrustAnchors
    /// nil unless `xcode.accept` is true.
    let xcodeAnchors: TrustAnchors?
    let cache: ChainCache

    /// Distinct certificate blocks remembered at once; real traffic has a handful.
    public static let chainCacheCapacity = 64

    public init(config: VerifierConfig) throws(IAPVFailure) {
        var roots: [X509Certificate] = []
        if config.includeAppleRoots {
            for root in AppleRoots.all {
                guard let bytes = Base64.decode(Array(root.base64DER.utf8)),
                      Hex.encode(Digest.sha256(bytes), uppercase: true) == root.pinnedSHA256,
                      let cert = X509Certificate(der: bytes) else {
                    throw IAPVFailure(.internal, "the built-in \(root.name) does not match its pinned SHA-256")
                }
                roots.append(cert)
            }
        }
        roots += try TrustAnchors.certificates(fromPEM: config.trustRootsPEM, what: "config.trust.roots_pem")
        guard !roots.isEmpty else {
            throw .config("config.trust leaves no root: set include_apple_roots to true or add roots_pem")
        }
        anchors = try TrustAnchors(roots: roots, what: "config.trust roots")
        let xcodeRoots = try TrustAnchors.certificates(fromPEM: config.xcodeRootsPEM, what: "config.xcode.roots_pem")
        if config.xcodeAccept {
            guard !xcodeRoots.isEmpty else {
                throw .config("config.xcode.accept is true but config.xcode.roots_pem is empty; add Xcode's StoreKit certificate")
            }
            xcodeAnchors = try TrustAnchors(roots: xcodeRoots, what: "config.xcode.roots_pem", requireCA: false)
        } else {
            xcodeAnchors = nil
        }
        self.config = config
        cache = ChainCache(capacity: Self.chainCacheCapacity)
    }

    public convenience init(json: UnsafeRawBufferPointer) throws(IAPVFailure) {
        try self.init(config: VerifierConfig(json: json))
    }

    /// Number of chains currently cached (for tests and diagnostics).
    package var cachedChainCount: Int { cache.count }   // tests and the fuzz harness only
}

extension Verifier {
    /// Per-call options as JSON, capped by `max_input_bytes` like the input they come with: the
    /// options carry host-supplied lists (delivered ids, orders) that a caller may not size.
    public func callOptions(json: UnsafeRawBufferPointer, entry: OptionsEntry = .general) throws(IAPVFailure) -> CallOptions {
        try admit(json.count, what: "options")
        return try CallOptions(json: json, entry: entry)
    }

    /// What every entry point checks before reading a byte: a usable `now` and the size cap.
    func admit(_ count: Int, nowMs: Int64? = nil, what: String) throws(IAPVFailure) {
        if let nowMs, nowMs < 0 { throw .argument("now_ms must be Unix milliseconds >= 0, got \(nowMs)") }
        guard count <= config.maxInputBytes else {
            throw IAPVFailure(.tooLarge, "the \(what) is \(count) bytes; max_input_bytes is \(config.maxInputBytes)")
        }
    }

    /// The entitlement engine with this verifier's catalog and grace policy and the call's host
    /// state: every entry point ends here with the transactions it trusted.
    func entitlements(_ transactions: [Transaction], renewals: [RenewalInfo], options: CallOptions,
                      nowMs: Int64) -> EntitlementReport {
        EntitlementEngine.evaluate(transactions: transactions, renewals: renewals, catalog: config.products,
                                   grace: config.gracePeriod, nowMs: nowMs, delivered: options.deliveredTransactionIDs,
                                   orders: options.orders)
    }

    /// Runs an entry point on any byte collection (a Swift host's `[UInt8]`, `ArraySlice`, ...).
    static func withBytes<R>(_ bytes: some Collection<UInt8>,
                             _ body: (UnsafeRawBufferPointer) throws(IAPVFailure) -> R) throws(IAPVFailure) -> R {
        let copy = Array(bytes)
        let result = copy.withUnsafeBytes { raw in Result { () throws(IAPVFailure) -> R in try body(raw) } }
        return try result.get()
    }

    public func interpretResponse(_ body: some Collection<UInt8>, options: CallOptions = CallOptions(),
                                  nowMs: Int64) throws(IAPVFailure) -> ResponseReport {
        try Self.withBytes(body) { raw throws(IAPVFailure) in try interpretResponse(raw, options: options, nowMs: nowMs) }
    }

    public func computeEntitlements(_ input: some Collection<UInt8>, options: CallOptions = CallOptions(),
                                    nowMs: Int64) throws(IAPVFailure) -> EntitlementInputReport {
        try Self.withBytes(input) { raw throws(IAPVFailure) in try computeEntitlements(raw, options: options, nowMs: nowMs) }
    }

    public func verifyJWS(_ token: some Collection<UInt8>, options: CallOptions = CallOptions(),
                          nowMs: Int64) throws(IAPVFailure) -> JWSReport {
        try Self.withBytes(token) { raw throws(IAPVFailure) in try verifyJWS(raw, options: options, nowMs: nowMs) }
    }
}
