// The product catalog's types: what kind of product each is and how it grants entitlements.
// The config's `products` section is parsed into these (Verifier/VerifierConfig.swift).

public enum ProductType: String, Sendable, CaseIterable {
    case consumable
    case nonConsumable = "non_consumable"
    case autoRenewable = "auto_renewable"
    case nonRenewing = "non_renewing"
}

/// One catalog entry: how a product grants entitlements.
public struct ProductRule: Sendable, Equatable {
    public var type: ProductType
    public var group: String?
    /// 1 is the highest tier, as in App Store Connect.
    public var level: Int64?
    public var entitlements: [String]
    public var durationMs: Int64?

    /// `entitlements` defaults to the product id itself when empty.
    public init(type: ProductType, group: String? = nil, level: Int64? = nil, entitlements: [String] = [],
                durationMs: Int64? = nil) {
        self.type = type
        self.group = group
        self.level = level
        self.entitlements = entitlements
        self.durationMs = durationMs
    }
}
