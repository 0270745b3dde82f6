// The entitlement, purchase and delivery parts of every result JSON.

extension EntitlementReport {
    /// Writes `entitlements`, `purchases`, `delivery`, `unknown_products`, `catalog_conflicts` and `intro_eligible`
    /// as members of the object the writer is in.
    func writeMembers(into w: inout JSONWriter) {
        w.key("entitlements")
        w.beginArray()
        entitlements.withUnsafeBufferPointer { list in
            for e in list.indices { Self.write(list.baseAddress! + e, into: &w) }   // read in place
        }
        w.endArray()
        w.key("purchases")
        w.beginArray()
        purchases.withUnsafeBufferPointer { list in
            // Read in place: no record is copied.
            for p in list.indices {
                w.beginObject()
                w.id("transaction_id", list[p].id)
                w.id("original_transaction_id", list[p].originalID)
                w.field("product_id", list[p].productID)
                w.field("type", list[p].type?.rawValue ?? "unknown")
                w.field("quantity", list[p].quantity)
                w.field("purchase_date_ms", list[p].purchaseDateMs)
                w.field("revoked", list[p].revoked)
                w.endObject()
            }
        }
        w.endArray()
        w.key("delivery")
        w.beginObject()
        w.key("to_deliver")
        Self.write(delivery.toDeliver, into: &w)
        w.key("to_revoke")
        Self.write(delivery.toRevoke, into: &w)
        w.key("orders")
        w.beginArray()
        for o in delivery.orders {
            w.beginObject()
            w.field("order_id", o.orderID)
            w.field("transaction_id", o.transactionID)
            w.field("status", o.matched ? "matched" : "unmatched")
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.key("unknown_products")
        w.beginArray()
        for p in unknownProducts { w.string(p) }
        w.endArray()
        w.key("catalog_conflicts")
        w.beginArray()
        for c in catalogConflicts {
            w.beginObject()
            w.field("product_id", c.productID)
            w.field("catalog_type", c.catalogType.rawValue)
            w.field("signed_type", c.signedType)
            w.endObject()
        }
        w.endArray()
        w.key("intro_eligible")
        w.beginObject()
        for (group, eligible) in introEligible {
            w.key(text: group)
            w.bool(eligible)
        }
        w.endObject()
    }

    private static func write(_ e: UnsafePointer<Entitlement>, into w: inout JSONWriter) {
        w.beginObject()
        w.field("id", e.pointee.id)
        w.field("active", e.pointee.active)
        w.field("state", e.pointee.state.rawValue)
        w.field("product_id", e.pointee.productID)
        w.id("original_transaction_id", e.pointee.originalTransaction)
        w.id("transaction_id", e.pointee.transaction)
        w.field("expires_date_ms", e.pointee.expiresDateMs)
        w.field("will_renew", e.pointee.willRenew)
        w.field("renews_to", e.pointee.renewsTo)
        w.field("period", e.pointee.period?.rawValue)
        w.field("ownership", e.pointee.ownership?.rawValue)
        w.field("expiration_reason", e.pointee.expirationReason)
        if let c = e.pointee.cancellationReason { w.field("cancellation_reason", c) }
        w.field("price_increase", e.pointee.priceIncrease)
        if let r = e.pointee.revocationType { w.field("revocation_type", r) }
        w.field("reason", e.pointee.reason)
        w.key("evidence")
        w.beginObject()
        w.field("rule", e.pointee.evidence.rule.rawValue)
        w.id("transaction_id", e.pointee.evidence.transaction)
        w.field("candidates", Int64(e.pointee.evidence.candidates))
        if let b = e.pointee.evidence.billing {
            w.key("billing")
            w.beginObject()
            w.field("plan_type", b.planType)
            w.field("billing_period_number", b.billingPeriodNumber)
            w.field("total_billing_periods", b.totalBillingPeriods)
            w.field("commitment_expires_date_ms", b.commitmentExpiresDateMs)
            w.endObject()
        }
        w.endObject()
        if let items = e.pointee.items {
            w.key("items")
            w.beginArray()
            for item in items {
                w.beginObject()
                w.field("sku", item.sku)
                w.field("active", item.active)
                w.field("revocation_date_ms", item.revocationDateMs)
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
    }

    private static func write(_ items: [DeliveryItem], into w: inout JSONWriter) {
        w.beginArray()
        for i in items {
            w.beginObject()
            w.field("transaction_id", i.transactionID)
            w.field("original_transaction_id", i.originalTransactionID)
            w.field("product_id", i.productID)
            w.field("quantity", i.quantity)
            w.field("purchase_date_ms", i.purchaseDateMs)
            w.endObject()
        }
        w.endArray()
    }

    /// The members for a result that grants nothing.
    static func writeEmptyMembers(into w: inout JSONWriter) {
        EntitlementReport().writeMembers(into: &w)
    }
}

extension JSONWriter {
    /// A member holding an id as its text, null when there is none (no String made).
    mutating func id(_ k: StaticString, _ text: IDText?) {
        key(k)
        if let text { text.withUTF8 { string(utf8: $0) } } else { null() }
    }

    /// The members every result ends with: what it grants, and nothing unless it is valid.
    mutating func grants(_ report: EntitlementReport?, valid: Bool) {
        // Through the optional in place, never bound to a copy of the report.
        if valid, report != nil {
            report?.writeMembers(into: &self)
        } else {
            EntitlementReport.writeEmptyMembers(into: &self)
        }
    }
}
