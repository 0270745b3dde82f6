// The entitlement, purchase and delivery parts of every result JSON.

extension EntitlementReport {
    /// Writes `entitlements`, `purchases`, `delivery`, `unknown_products`, `catalog_conflicts` and `intro_eligible`
    /// as members of the object the writer is in.
    func writeMembers(into w: inout JSONWriter) {
        w.key(GrantMember.entitlements)
        w.beginArray()
        entitlements.withUnsafeBufferPointer { list in
            for e in list.indices { Self.write(list.baseAddress! + e, into: &w) }   // read in place
        }
        w.endArray()
        w.key(GrantMember.purchases)
        w.beginArray()
        purchases.withUnsafeBufferPointer { list in
            // Read in place: no record is copied.
            for p in list.indices {
                w.beginObject()
                w.id(PurchaseMember.transactionID, list[p].id)
                w.id(PurchaseMember.originalTransactionID, list[p].originalID)
                w.field(PurchaseMember.productID, list[p].productID)
                w.field(PurchaseMember.type, list[p].type?.rawValue ?? "unknown")
                w.field(PurchaseMember.quantity, list[p].quantity)
                w.field(PurchaseMember.purchaseDateMs, list[p].purchaseDateMs)
                w.field(PurchaseMember.revoked, list[p].revoked)
                w.endObject()
            }
        }
        w.endArray()
        w.key(GrantMember.delivery)
        w.beginObject()
        w.key(DeliveryMember.toDeliver)
        Self.write(delivery.toDeliver, into: &w)
        w.key(DeliveryMember.toRevoke)
        Self.write(delivery.toRevoke, into: &w)
        w.key(DeliveryMember.orders)
        w.beginArray()
        for o in delivery.orders {
            w.beginObject()
            w.field(OrderMatchMember.orderID, o.orderID)
            w.field(OrderMatchMember.transactionID, o.transactionID)
            w.field(OrderMatchMember.status, o.matched ? "matched" : "unmatched")
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.key(GrantMember.unknownProducts)
        w.beginArray()
        for p in unknownProducts { w.string(p) }
        w.endArray()
        w.key(GrantMember.catalogConflicts)
        w.beginArray()
        for c in catalogConflicts {
            w.beginObject()
            w.field(CatalogConflictMember.productID, c.productID)
            w.field(CatalogConflictMember.catalogType, c.catalogType.rawValue)
            w.field(CatalogConflictMember.signedType, c.signedType)
            w.endObject()
        }
        w.endArray()
        w.key(GrantMember.introEligible)
        w.beginObject()
        for (group, eligible) in introEligible {
            w.key(text: group)
            w.bool(eligible)
        }
        w.endObject()
    }

    private static func write(_ e: UnsafePointer<Entitlement>, into w: inout JSONWriter) {
        w.beginObject()
        w.field(EntitlementMember.id, e.pointee.id)
        w.field(EntitlementMember.active, e.pointee.active)
        w.field(EntitlementMember.state, e.pointee.state.rawValue)
        w.field(EntitlementMember.productID, e.pointee.productID)
        w.id(EntitlementMember.originalTransactionID, e.pointee.originalTransaction)
        w.id(EntitlementMember.transactionID, e.pointee.transaction)
        w.field(EntitlementMember.expiresDateMs, e.pointee.expiresDateMs)
        w.field(EntitlementMember.willRenew, e.pointee.willRenew)
        w.field(EntitlementMember.renewsTo, e.pointee.renewsTo)
        w.field(EntitlementMember.period, e.pointee.period?.rawValue)
        w.field(EntitlementMember.ownership, e.pointee.ownership?.rawValue)
        w.field(EntitlementMember.expirationReason, e.pointee.expirationReason)
        if let c = e.pointee.cancellationReason { w.field(EntitlementMember.cancellationReason, c) }
        w.field(EntitlementMember.priceIncrease, e.pointee.priceIncrease)
        if let r = e.pointee.revocationType { w.field(EntitlementMember.revocationType, r) }
        w.field(EntitlementMember.reason, e.pointee.reason)
        w.key(EntitlementMember.evidence)
        w.beginObject()
        w.field(EvidenceMember.rule, e.pointee.evidence.rule.rawValue)
        w.id(EvidenceMember.transactionID, e.pointee.evidence.transaction)
        w.field(EvidenceMember.candidates, Int64(e.pointee.evidence.candidates))
        if let offer = e.pointee.evidence.offerType {
            w.field(EvidenceMember.offerType, offer)
            w.field(EvidenceMember.offer, OfferType.name(of: offer))
        }
        if let b = e.pointee.evidence.billing {
            w.key(EvidenceMember.billing)
            w.beginObject()
            w.field(BillingMember.planType, b.planType)
            w.field(BillingMember.billingPeriodNumber, b.billingPeriodNumber)
            w.field(BillingMember.totalBillingPeriods, b.totalBillingPeriods)
            w.field(BillingMember.commitmentExpiresDateMs, b.commitmentExpiresDateMs)
            w.endObject()
        }
        w.endObject()
        if let items = e.pointee.items {
            w.key(EntitlementMember.items)
            w.beginArray()
            for item in items {
                w.beginObject()
                w.field(EntitlementItemMember.sku, item.sku)
                w.field(EntitlementItemMember.active, item.active)
                w.field(EntitlementItemMember.revocationDateMs, item.revocationDateMs)
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
            w.field(DeliveryItemMember.transactionID, i.transactionID)
            w.field(DeliveryItemMember.originalTransactionID, i.originalTransactionID)
            w.field(DeliveryItemMember.productID, i.productID)
            w.field(DeliveryItemMember.quantity, i.quantity)
            w.field(DeliveryItemMember.purchaseDateMs, i.purchaseDateMs)
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
    mutating func id<M: SurfaceObject>(_ m: M, _ text: IDText?) {
        key(m)
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
