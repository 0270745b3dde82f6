// The verifier configuration, parsed strictly from JSON once per verifier.
// Unknown keys and wrong types are IAPV_E_CONFIG with a message naming the key.

public struct VerifierConfig: Sendable {
    /// `"*"` accepts any app, and results then say the bundle was not checked.
    public var bundleID: String
    /// True when `bundleID` came from the caller's fallback, not from the JSON or an override.
    public private(set) var bundleIDFromFallback = false
    public var bundleVersions: [String]?
    public var environments: Set<PurchaseEnvironment> = [.production]
    public var trustRootsPEM: [String] = []
    public var includeAppleRoots = true
    public var xcodeAccept = false
    public var xcodeRootsPEM: [String] = []
    public var deviceCheck: DeviceCheckPolicy = .ifGiven
    public var maxInputBytes: Int = 3 * 1024 * 1024
    public var maxReceiptAgeMs: Int64?
    public var gracePeriod: GracePeriodPolicy = .honor
    /// OCSP: "off" checks responses the host passes; "required" refuses without a good one.
    public var revocation: RevocationPolicy = .off
    /// nil when the config has no `products` section (each product is then its own entitlement).
    public var products: [String: ProductRule]?
    /// The app's Apple ID (App Store Connect, App Information). Checked wherever Apple's signed
    /// payload carries one (notifications, app transactions); a Production payload that names an
    /// app is refused while this is unset, unless `bundle_id` is `"*"`.
    public var appAppleID: Int64?

    /// The largest input the library will ever accept, whatever the config says.
    public static let hardInputLimit = 64 * 1024 * 1024

    public init(bundleID: String) { self.bundleID = bundleID }

    /// Parses the JSON config. Throws `IAPVFailure` with status `.config`.
    /// - Parameters:
    ///   - json: the config document's bytes (docs/config.md).
    ///   - bundleIDOverride: replaces `bundle_id` (the CLI's `--bundle-id`).
    ///   - bundleIDFallback: used when neither the override nor the JSON gives a bundle id (the
    ///     CLI passes `"*"`); without one, a config lacking `bundle_id` is an error.
    public init(json: UnsafeRawBufferPointer, bundleIDOverride: String? = nil,
                bundleIDFallback: String? = nil) throws(IAPVFailure) {
        let doc = try ConfigJSONDocument(bytes: json, what: "config", status: .config)
        guard let members = doc.root.members else {
            throw .config("config: expected a JSON object, got \(doc.root.typeName)")
        }
        var bundle: String?
        var config = VerifierConfig(bundleID: "")
        for (key, value) in members {
            let path = "config.\(key)"
            guard let member = ConfigMember.member(named: key) else { throw .config(ConfigMember.unknownKey(key, in: "config")) }
            if member == .bundleID {
                let s = try ConfigField.string(value, path)
                guard !s.isEmpty else { throw .config("\(path) must not be empty; use \"*\" to accept any app") }
                bundle = s
            } else {
                try config.read(member, value, path)
            }
        }
        guard let chosen = bundleIDOverride ?? bundle ?? bundleIDFallback else {
            throw .config("config.bundle_id is required (use \"*\" to accept any app)")
        }
        config.bundleID = chosen
        config.bundleIDFromFallback = bundleIDOverride == nil && bundle == nil
        self = config
    }

    /// One top-level key of the config other than `bundle_id`.
    private mutating func read(_ key: ConfigMember, _ value: ConfigJSONValue, _ path: String) throws(IAPVFailure) {
        switch key {
        case .bundleID:
            break   // read by init
        case .bundleVersions:
            bundleVersions = try ConfigField.stringArray(value, path)
        case .environments:
            environments = try Self.environments(value, path)
        case .trust:
            for (k, v) in try ConfigField.object(value, path) {
                switch TrustConfigMember.member(named: k) {
                case .rootsPEM: trustRootsPEM = try ConfigField.stringArray(v, "\(path).\(k)")
                case .includeAppleRoots: includeAppleRoots = try ConfigField.bool(v, "\(path).\(k)")
                case nil: throw .config(TrustConfigMember.unknownKey(k, in: path))
                }
            }
        case .xcode:
            for (k, v) in try ConfigField.object(value, path) {
                switch XcodeConfigMember.member(named: k) {
                case .accept: xcodeAccept = try ConfigField.bool(v, "\(path).\(k)")
                case .rootsPEM: xcodeRootsPEM = try ConfigField.stringArray(v, "\(path).\(k)")
                case nil: throw .config(XcodeConfigMember.unknownKey(k, in: path))
                }
            }
        case .deviceCheck:
            deviceCheck = try ConfigField.choice(value, path, use: "if_given, required or off")
        case .revocation:
            revocation = try ConfigField.choice(value, path, use: "off or required")
        case .gracePeriod:
            gracePeriod = try ConfigField.choice(value, path, use: "honor or ignore")
        case .maxInputBytes:
            let n = try ConfigField.integer(value, path)
            guard n > 0, n <= Int64(VerifierConfig.hardInputLimit) else {
                throw .config("\(path) must be between 1 and \(VerifierConfig.hardInputLimit)")
            }
            maxInputBytes = Int(n)
        case .maxReceiptAgeMs:
            if value.isNull { maxReceiptAgeMs = nil; return }
            let n = try ConfigField.integer(value, path)
            guard n >= 0 else { throw .config("\(path) must be >= 0 or null") }
            maxReceiptAgeMs = n
        case .products:
            products = try ProductCatalogParser.parse(value, path)
        case .appAppleID:
            let n = try ConfigField.integer(value, path)
            guard n > 0 else { throw .config("\(path) must be a positive integer (App Store Connect, App Information, Apple ID)") }
            appAppleID = n
        }
    }

    private static func environments(_ value: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> Set<PurchaseEnvironment> {
        var set = Set<PurchaseEnvironment>()
        for s in try ConfigField.stringArray(value, path) {
            guard let env = PurchaseEnvironment(rawValue: s) else {
                throw .config("\(path): unknown environment \"\(s)\"; use Production, Sandbox, Xcode or LocalTesting")
            }
            set.insert(env)
        }
        return set
    }
}

/// Typed accessors that name the offending key when the type is wrong.
enum ConfigField {
    static func string(_ v: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> String {
        guard let s = v.string else { throw .config("\(path) must be a string, got \(v.typeName)") }
        return s
    }
    /// A string naming one of `T`'s values; `use` lists them for the message.
    static func choice<T: RawRepresentable>(_ v: ConfigJSONValue, _ path: String, use: String) throws(IAPVFailure) -> T
    where T.RawValue == String {
        let s = try string(v, path)
        guard let value = T(rawValue: s) else { throw .config("\(path): unknown value \"\(s)\"; use \(use)") }
        return value
    }
    static func bool(_ v: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> Bool {
        guard let b = v.bool else { throw .config("\(path) must be a boolean, got \(v.typeName)") }
        return b
    }
    static func integer(_ v: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> Int64 {
        guard let n = v.integer else { throw .config("\(path) must be an integer, got \(v.typeName)") }
        return n
    }
    static func object(_ v: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> [(key: String, value: ConfigJSONValue)] {
        guard let m = v.members else { throw .config("\(path) must be an object, got \(v.typeName)") }
        return m
    }
    static func stringArray(_ v: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> [String] {
        guard let items = v.array else { throw .config("\(path) must be an array of strings, got \(v.typeName)") }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = item.string else { throw .config("\(path)[\(i)] must be a string, got \(item.typeName)") }
            out.append(s)
        }
        return out
    }
}

/// The `products` section: product id → rule.
enum ProductCatalogParser {
    static func parse(_ value: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> [String: ProductRule] {
        var catalog: [String: ProductRule] = [:]
        for (productID, entry) in try ConfigField.object(value, path) {
            let p = "\(path).\(productID)"
            guard !productID.isEmpty else { throw .config("\(path): a product id must not be empty") }
            var type: ProductType?
            var group: String?
            var level: Int64?
            var entitlements: [String]?
            var duration: Int64?
            for (k, v) in try ConfigField.object(entry, p) {
                let kp = "\(p).\(k)"
                switch ProductConfigMember.member(named: k) {
                case .type:
                    let s = try ConfigField.string(v, kp)
                    guard let t = ProductType(rawValue: s) else {
                        throw .config("\(kp): unknown type \"\(s)\"; use consumable, non_consumable, auto_renewable or non_renewing")
                    }
                    type = t
                case .group: group = try ConfigField.string(v, kp)
                case .level:
                    let n = try ConfigField.integer(v, kp)
                    guard n >= 1 else { throw .config("\(kp) must be >= 1 (1 is the highest tier)") }
                    level = n
                case .entitlements: entitlements = try ConfigField.stringArray(v, kp)
                case .durationMs:
                    let n = try ConfigField.integer(v, kp)
                    guard n > 0 else { throw .config("\(kp) must be > 0") }
                    duration = n
                case nil: throw .config(ProductConfigMember.unknownKey(k, in: p))
                }
            }
            guard let type else { throw .config("\(p).type is required") }
            if type == .consumable, let e = entitlements, !e.isEmpty {
                throw .config("\(p): a consumable grants no entitlements; remove \"entitlements\"")
            }
            if type != .autoRenewable, group != nil || level != nil {
                throw .config("\(p): group and level apply only to auto_renewable products")
            }
            if type == .nonRenewing, duration == nil {
                throw .config("\(p).duration_ms is required for a non_renewing product")
            }
            if type != .nonRenewing, duration != nil {
                throw .config("\(p).duration_ms applies only to non_renewing products")
            }
            let grants = type == .consumable ? [] : (entitlements ?? [productID])
            catalog[productID] = ProductRule(type: type, group: group, level: level, entitlements: grants, durationMs: duration)
        }
        return catalog
    }
}
