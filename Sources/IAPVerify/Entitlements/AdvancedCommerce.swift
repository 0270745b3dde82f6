// Advanced Commerce: an app that sells its own catalog (SKUs) through one App Store product gets
// the items of each purchase signed with the transaction and the renewal info
// (`advancedCommerceInfo`). They are read from signed payloads into these records, written in
// the result as `advanced_commerce`, and each item's state is shown beside the entitlement of the
// product that carries it. Prices are in milliunits of the currency, as Apple signs them.

public struct AdvancedCommerceRefund: Sendable, Equatable {
    public var amount: Int64?
    public var dateMs: Int64?
    public var reason: String?
    public var type: String?
}

public struct AdvancedCommerceItem: Sendable, Equatable {
    public var sku: String
    public var displayName: String?
    public var description: String?
    public var price: Int64?
    /// The offer on this item: its period (ISO 8601 duration), how many periods, its price, why.
    public var offerPeriod: String?
    public var offerPeriodCount: Int64?
    public var offerPrice: Int64?
    public var offerReason: String?
    /// When Apple revoked this item alone (the rest of the purchase stands).
    public var revocationDateMs: Int64?
    public var refunds: [AdvancedCommerceRefund] = []
    /// Renewal items: a price increase the customer has or has not consented to.
    public var priceIncreaseStatus: String?
    public var priceIncreasePrice: Int64?
    /// The other items whose prices change with this one (Apple's `dependentSKUs`).
    public var priceIncreaseDependentSKUs: [String]?

    /// Whether the item still counts at `nowMs` (its own revocation, not the purchase's).
    public func isRevoked(at nowMs: Int64) -> Bool { revocationDateMs.map { $0 <= nowMs } ?? false }
}

public struct AdvancedCommerceInfo: Sendable, Equatable {
    public var requestReferenceID: String?
    /// The billing period of the items (ISO 8601 duration: P1M, P1Y...).
    public var period: String?
    public var displayName: String?
    public var description: String?
    public var taxCode: String?
    public var taxRate: String?
    public var estimatedTax: Int64?
    public var taxExclusivePrice: Int64?
    /// Renewal infos: the token the next Advanced Commerce request must carry.
    public var consistencyToken: String?
    public var items: [AdvancedCommerceItem] = []
}

extension AdvancedCommerceInfo {
    /// At most this many items are read: more is not a purchase Apple signs.
    static let maxItems = 1000

    /// Reads `advancedCommerceInfo` of a signed payload (camelCase, strict), or nil when absent.
    static func read(_ payload: FieldReader) throws(FieldProblem) -> AdvancedCommerceInfo? {
        guard let f = try payload.object("advancedCommerceInfo") else { return nil }
        var info = AdvancedCommerceInfo()
        info.requestReferenceID = try f.string("requestReferenceId")
        info.period = try f.string("period")
        info.taxCode = try f.string("taxCode")
        info.taxRate = try f.string("taxRate")
        info.estimatedTax = try f.int("estimatedTax")
        info.taxExclusivePrice = try f.int("taxExclusivePrice")
        info.consistencyToken = try f.string("consistencyToken")
        if let d = try f.object("descriptors") {
            info.displayName = try d.string("displayName")
            info.description = try d.string("description")
        }
        let items = try list(f, "items", path: "\(f.path).items")
        guard items.count <= maxItems else { throw FieldProblem(message: "\(f.path).items has \(items.count) items; at most \(maxItems)") }
        for (i, value) in items.enumerated() {
            let it = try FieldReader(value, path: "\(f.path).items", index: i, f.flavour)
            guard let sku = try it.string("SKU") else { throw FieldProblem(message: "\(it.path).SKU is missing") }
            var item = AdvancedCommerceItem(sku: sku)
            item.displayName = try it.string("displayName")
            item.description = try it.string("description")
            item.price = try it.int("price")
            item.revocationDateMs = try it.int("revocationDate")
            if let o = try it.object("offer") {
                item.offerPeriod = try o.string("period")
                item.offerPeriodCount = try o.int("periodCount")
                item.offerPrice = try o.int("price")
                item.offerReason = try o.string("reason")
            }
            if let p = try it.object("priceIncreaseInfo") {
                item.priceIncreaseStatus = try p.string("status")
                item.priceIncreasePrice = try p.int("price")
                item.priceIncreaseDependentSKUs = try p.stringArray("dependentSKUs")
            }
            for (j, r) in try list(it, "refunds", path: "\(it.path).refunds").enumerated() {
                let rf = try FieldReader(r, path: "\(it.path).refunds", index: j, f.flavour)
                item.refunds.append(AdvancedCommerceRefund(amount: try rf.int("refundAmount"), dateMs: try rf.int("refundDate"),
                                                           reason: try rf.string("refundReason"), type: try rf.string("refundType")))
            }
            info.items.append(item)
        }
        return info
    }

    private static func list(_ f: FieldReader, _ key: StaticString, path: String) throws(FieldProblem) -> [JSONValue] {
        guard let v = f.object[literal: key], !v.isNull else { return [] }
        guard let items = v.array else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        return items
    }

    /// The result's `advanced_commerce` object.
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field(AdvancedCommerceMember.requestReferenceID, requestReferenceID)
        w.field(AdvancedCommerceMember.period, period)
        w.field(AdvancedCommerceMember.displayName, displayName)
        w.field(AdvancedCommerceMember.description, description)
        w.field(AdvancedCommerceMember.taxCode, taxCode)
        w.field(AdvancedCommerceMember.taxRate, taxRate)
        w.field(AdvancedCommerceMember.estimatedTax, estimatedTax)
        w.field(AdvancedCommerceMember.taxExclusivePrice, taxExclusivePrice)
        if let consistencyToken { w.field(AdvancedCommerceMember.consistencyToken, consistencyToken) }
        w.key(AdvancedCommerceMember.items)
        w.beginArray()
        for item in items {
            w.beginObject()
            w.field(AdvancedCommerceItemMember.sku, item.sku)
            w.field(AdvancedCommerceItemMember.displayName, item.displayName)
            w.field(AdvancedCommerceItemMember.description, item.description)
            w.field(AdvancedCommerceItemMember.price, item.price)
            if item.offerPeriod != nil || item.offerPrice != nil || item.offerPeriodCount != nil || item.offerReason != nil {
                w.key(AdvancedCommerceItemMember.offer)
                w.beginObject()
                w.field(ItemOfferMember.period, item.offerPeriod)
                w.field(ItemOfferMember.periodCount, item.offerPeriodCount)
                w.field(ItemOfferMember.price, item.offerPrice)
                w.field(ItemOfferMember.reason, item.offerReason)
                w.endObject()
            }
            w.field(AdvancedCommerceItemMember.revocationDateMs, item.revocationDateMs)
            if !item.refunds.isEmpty {
                w.key(AdvancedCommerceItemMember.refunds)
                w.beginArray()
                for r in item.refunds {
                    w.beginObject()
                    w.field(ItemRefundMember.amount, r.amount)
                    w.field(ItemRefundMember.dateMs, r.dateMs)
                    w.field(ItemRefundMember.reason, r.reason)
                    w.field(ItemRefundMember.type, r.type)
                    w.endObject()
                }
                w.endArray()
            }
            if item.priceIncreaseStatus != nil || item.priceIncreasePrice != nil || item.priceIncreaseDependentSKUs != nil {
                w.key(AdvancedCommerceItemMember.priceIncrease)
                w.beginObject()
                w.field(ItemPriceIncreaseMember.status, item.priceIncreaseStatus)
                w.field(ItemPriceIncreaseMember.price, item.priceIncreasePrice)
                if let skus = item.priceIncreaseDependentSKUs { w.field(ItemPriceIncreaseMember.dependentSKUs, skus) }
                w.endObject()
            }
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}

// The description of the `advanced_commerce` object (JSON/Surface.swift): `write` names its
// members through these enums only.

package enum AdvancedCommerceMember: SurfaceObject {
    case requestReferenceID, period, displayName, description, taxCode, taxRate, estimatedTax, taxExclusivePrice
    case consistencyToken, items

    package static let objectName: StaticString = "advanced_commerce"
    package static let meaning: StaticString = "an Advanced Commerce purchase's own catalog: what the one App Store product sold (prices in milliunits of the record's currency)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .requestReferenceID: MemberSpec("request_reference_id", .string, nullable: true, "the app's reference for the request")
        case .period: MemberSpec("period", .string, nullable: true, "the billing period, ISO 8601")
        case .displayName: MemberSpec("display_name", .string, nullable: true, "the purchase's display name")
        case .description: MemberSpec("description", .string, nullable: true, "the purchase's description")
        case .taxCode: MemberSpec("tax_code", .string, nullable: true, "the tax code")
        case .taxRate: MemberSpec("tax_rate", .string, nullable: true, "the tax rate, as Apple wrote it")
        case .estimatedTax: MemberSpec("estimated_tax", .integer, nullable: true, "the estimated tax, in milliunits")
        case .taxExclusivePrice: MemberSpec("tax_exclusive_price", .integer, nullable: true, "the price before tax, in milliunits")
        case .consistencyToken: MemberSpec("consistency_token", .string, presence: .whenPresent, "renewal infos: the token a change must quote")
        case .items: MemberSpec("items", .array(.object(AdvancedCommerceItemMember.self)), "the items sold")
        }
    }
}

package enum AdvancedCommerceItemMember: SurfaceObject {
    case sku, displayName, description, price, offer, revocationDateMs, refunds, priceIncrease

    package static let objectName: StaticString = "advanced_commerce_item"
    package static let meaning: StaticString = "one item of an Advanced Commerce purchase"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .sku: MemberSpec("sku", .string, "the item's SKU")
        case .displayName: MemberSpec("display_name", .string, nullable: true, "the item's display name")
        case .description: MemberSpec("description", .string, nullable: true, "the item's description")
        case .price: MemberSpec("price", .integer, nullable: true, "the item's price, in milliunits")
        case .offer: MemberSpec("offer", .object(ItemOfferMember.self), presence: .whenPresent, "the item's offer")
        case .revocationDateMs: MemberSpec("revocation_date_ms", .ms, nullable: true, "when the item alone was revoked (the rest of the purchase stands)")
        case .refunds: MemberSpec("refunds", .array(.object(ItemRefundMember.self)), presence: .whenPresent, "the item's refunds")
        case .priceIncrease: MemberSpec("price_increase", .object(ItemPriceIncreaseMember.self), presence: .whenPresent,
            "renewal items: a price increase the customer has or has not consented to")
        }
    }
}

package enum ItemOfferMember: SurfaceObject {
    case period, periodCount, price, reason

    package static let objectName: StaticString = "advanced_commerce_offer"
    package static let meaning: StaticString = "an Advanced Commerce item's offer"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .period: MemberSpec("period", .string, nullable: true, "the offer's period, ISO 8601")
        case .periodCount: MemberSpec("period_count", .integer, nullable: true, "how many periods it lasts")
        case .price: MemberSpec("price", .integer, nullable: true, "the offer price, in milliunits")
        case .reason: MemberSpec("reason", .string, nullable: true, values: .open("ACQUISITION WIN_BACK RETENTION"), "why the offer was given")
        }
    }
}

package enum ItemRefundMember: SurfaceObject {
    case amount, dateMs, reason, type

    package static let objectName: StaticString = "advanced_commerce_refund"
    package static let meaning: StaticString = "one refund of an Advanced Commerce item"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .amount: MemberSpec("amount", .integer, nullable: true, "the refunded amount, in milliunits")
        case .dateMs: MemberSpec("date_ms", .ms, nullable: true, "when it was refunded")
        case .reason: MemberSpec("reason", .string, nullable: true, "Apple's refundReason")
        case .type: MemberSpec("type", .string, nullable: true, "Apple's refundType")
        }
    }
}

package enum ItemPriceIncreaseMember: SurfaceObject {
    case status, price, dependentSKUs

    package static let objectName: StaticString = "advanced_commerce_price_increase"
    package static let meaning: StaticString = "a renewal item's price increase (Apple's priceIncreaseInfo)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .status: MemberSpec("status", .string, nullable: true, "whether the customer has consented, as Apple wrote it")
        case .price: MemberSpec("price", .integer, nullable: true, "the new price, in milliunits")
        case .dependentSKUs: MemberSpec("dependent_skus", .array(.string), presence: .whenPresent,
            "the other items whose prices change with this one (Apple's dependentSKUs)")
        }
    }
}
