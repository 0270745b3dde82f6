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
        w.field("request_reference_id", requestReferenceID)
        w.field("period", period)
        w.field("display_name", displayName)
        w.field("description", description)
        w.field("tax_code", taxCode)
        w.field("tax_rate", taxRate)
        w.field("estimated_tax", estimatedTax)
        w.field("tax_exclusive_price", taxExclusivePrice)
        if let consistencyToken { w.field("consistency_token", consistencyToken) }
        w.key("items")
        w.beginArray()
        for item in items {
            w.beginObject()
            w.field("sku", item.sku)
            w.field("display_name", item.displayName)
            w.field("description", item.description)
            w.field("price", item.price)
            if item.offerPeriod != nil || item.offerPrice != nil || item.offerPeriodCount != nil || item.offerReason != nil {
                w.key("offer")
                w.beginObject()
                w.field("period", item.offerPeriod)
                w.field("period_count", item.offerPeriodCount)
                w.field("price", item.offerPrice)
                w.field("reason", item.offerReason)
                w.endObject()
            }
            w.field("revocation_date_ms", item.revocationDateMs)
            if !item.refunds.isEmpty {
                w.key("refunds")
                w.beginArray()
                for r in item.refunds {
                    w.beginObject()
                    w.field("amount", r.amount)
                    w.field("date_ms", r.dateMs)
                    w.field("reason", r.reason)
                    w.field("type", r.type)
                    w.endObject()
                }
                w.endArray()
            }
            if item.priceIncreaseStatus != nil || item.priceIncreasePrice != nil {
                w.key("price_increase")
                w.beginObject()
                w.field("status", item.priceIncreaseStatus)
                w.field("price", item.priceIncreasePrice)
                w.endObject()
            }
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
