// Transactions and renewal infos read from JSON objects: /verifyReceipt items, the
// entitlements input and per-call `renewal_info`. Field names follow Apple's, which
// are also the normalised names of the result JSON; the field tables
// (RecordFieldTables.swift) list them.

enum TransactionJSON {
    static func transaction(_ v: JSONValue, path: String, index: Int? = nil) throws(FieldProblem) -> Transaction {
        try TransactionRecord.read(v, .snake, .tolerant, path: path, index: index)
    }

    /// One of a list's transactions: `texts` is shared by the list's records.
    static func transaction(_ v: JSONValue, path: String, index: Int? = nil, texts: inout RecentTexts) throws(FieldProblem) -> Transaction {
        try TransactionRecord.read(v, .snake, .tolerant, path: path, index: index, texts: &texts)
    }

    /// Fails where `transaction` fails, building nothing (`scratch` takes what a check sets).
    static func checkTransaction(_ v: JSONValue, path: String, index: Int? = nil,
                                 scratch: inout TransactionRecord) throws(FieldProblem) {
        try TransactionRecord.check(v, .snake, .tolerant, path: path, index: index, scratch: &scratch)
    }

    /// One of a list's renewal infos: `texts` is shared by the list's records.
    static func renewalInfo(_ v: JSONValue, path: String, index: Int? = nil, texts: inout RecentTexts) throws(FieldProblem) -> RenewalInfo {
        try RenewalInfo.read(v, .snake, .tolerant, path: path, index: index, texts: &texts)
    }

    static func transactions(_ v: JSONValue?, path: String) throws(FieldProblem) -> [Transaction] {
        guard let v, !v.isNull else { return [] }
        if v.kind == .object { return [try transaction(v, path: path)] }  // iOS 6 style: one object
        guard let items = v.elements else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        var out: [Transaction] = []
        out.reserveCapacity(items.countHint)
        var texts = RecentTexts()
        for (i, item) in items.enumerated() { out.append(try transaction(item, path: path, index: i, texts: &texts)) }
        return out
    }

    static func renewalInfos(_ v: JSONValue?, path: String) throws(FieldProblem) -> [RenewalInfo] {
        var texts = RecentTexts()
        return try renewalInfos(v, path: path, texts: &texts)
    }

    /// The same, sharing repeated texts (product ids) with what was read before (`texts`).
    static func renewalInfos(_ v: JSONValue?, path: String, texts: inout RecentTexts) throws(FieldProblem) -> [RenewalInfo] {
        guard let v, !v.isNull else { return [] }
        guard let items = v.elements else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        var out: [RenewalInfo] = []
        out.reserveCapacity(items.countHint)
        for (i, item) in items.enumerated() { out.append(try renewalInfo(item, path: path, index: i, texts: &texts)) }
        return out
    }
}

/// Normalised transactions and renewal infos, in the field names of §5.2 and Apple's.
enum TransactionWriter {
    static func write(_ t: Transaction, into w: inout JSONWriter) {
        withUnsafePointer(to: t) { TransactionRecord.write($0, into: &w) }
    }

    static func write(_ r: RenewalInfo, into w: inout JSONWriter) {
        withUnsafePointer(to: r) { RenewalInfo.write(at: $0, into: &w) }
    }

    /// A result's two lists: its transactions and its renewal infos, under the names given.
    static func write<M: SurfaceObject>(_ transactionsKey: M, _ transactions: [Transaction], _ renewalsKey: M,
                      _ renewals: [RenewalInfo], into w: inout JSONWriter) {
        w.key(transactionsKey)
        w.beginArray()
        transactions.withUnsafeBufferPointer { list in
            // Read in place: a transaction without StoreKit 2 fields is not copied.
            for i in list.indices { TransactionRecord.write(list.baseAddress! + i, into: &w) }
        }
        w.endArray()
        w.key(renewalsKey)
        w.beginArray()
        renewals.withUnsafeBufferPointer { list in
            for i in list.indices { RenewalInfo.write(at: list.baseAddress! + i, into: &w) }
        }
        w.endArray()
    }
}

extension RenewalInfo {
    /// One renewal info as the result writes it: its table's rows, then its Advanced Commerce items.
    static func write(at r: UnsafePointer<RenewalInfo>, into w: inout JSONWriter) {
        guard let info = r.pointee.commerce.advancedCommerce else {
            fields.write(at: r, into: &w)
            return
        }
        var copy = r.pointee
        w.beginObject()
        fields.writeMembers(&copy, into: &w)
        w.key(advancedCommerceMember)
        info.write(into: &w)
        w.endObject()
    }
}
