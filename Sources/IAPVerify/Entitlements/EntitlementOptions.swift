// What the engine needs besides the transactions: the verifier's catalog and grace policy (fixed
// per verifier) and what the host already knows (per call).

/// What the host tells a call about its own records: every entry point passes it to the engine.
public struct EntitlementOptions: Sendable {
    /// Transactions the host already delivered (options `delivered_transaction_ids`).
    public var deliveredTransactionIDs: [String]
    /// Orders the host waits to see paid (options `orders`).
    public var orders: [PendingOrder]
    /// Renewal infos the host keeps for these subscriptions (options `renewal_info`).
    public var renewalInfo: [RenewalInfo]
    // No default values on the fields: the init's defaults are its arguments', so each field is
    // stored once.

    public init(deliveredTransactionIDs: [String] = [], orders: [PendingOrder] = [], renewalInfo: [RenewalInfo] = []) {
        self.deliveredTransactionIDs = deliveredTransactionIDs
        self.orders = orders
        self.renewalInfo = renewalInfo
    }
}

/// The engine as one verifier configures it.
struct EngineSettings: Sendable {
    /// nil when the config has no `products` section.
    let catalog: [String: ProductRule]?
    let grace: GracePeriodPolicy

    /// Every entry point ends here with the transactions it trusted, the renewal infos they came
    /// with, and the host's state, whose renewal infos are merged here: after the call's own, so
    /// of two that rank alike the call's is kept.
    func evaluate(_ transactions: consuming [Transaction], ownRenewals: [RenewalInfo], host: EntitlementOptions, nowMs: Int64) -> EntitlementReport {
        evaluate(consume transactions, renewals: host.renewalInfo.isEmpty ? ownRenewals : ownRenewals + host.renewalInfo,
                 host: host, nowMs: nowMs)
    }

    /// The engine with exactly `renewals` (the host's are not added).
    func evaluate(_ transactions: consuming [Transaction], renewals: [RenewalInfo], host: EntitlementOptions, nowMs: Int64) -> EntitlementReport {
        EntitlementEngine.evaluate(transactions: consume transactions, renewals: renewals, catalog: catalog, grace: grace,
                                   nowMs: nowMs, delivered: host.deliveredTransactionIDs, orders: host.orders)
    }
}

@available(*, deprecated, renamed: "EntitlementOptions", message: "computeEntitlements' options, like every call's, are named for the call: EntitlementOptions")
public typealias HostState = EntitlementOptions
