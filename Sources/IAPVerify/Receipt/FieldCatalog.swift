// The records a result holds, as their tables describe them: every member of a transaction, a
// renewal info (RecordFieldTables.swift) and a receipt's in-app record (ReceiptRecordTable.swift),
// by JSON name, with its type and when it is written. `iapverify fields --json` prints them with the
// verdicts, actions and environments, and `make test` holds the bindings and the JSON Schemas to them
// (Tests/architecture/check_fields.py).

/// One member of a record.
package struct FieldEntry: Sendable {
    /// The member's name in the result JSON.
    package let name: String
    /// `string`, `integer`, `boolean`, `date_ms` (Unix milliseconds), `string_array`, `object`
    /// or `array`.
    package let type: String
    /// `always` (null when the record has no value) or `when_present`.
    package let written: String
    /// A receipt record's member: the attribute type Apple signs it as (nil: none).
    package let attribute: Int64?
    /// An object's members, when its table lists them.
    package let fields: [FieldEntry]
}

/// One record kind and its members, in the order the result writes them.
package struct RecordEntry: Sendable {
    package let record: String
    package let fields: [FieldEntry]
}

package enum FieldCatalog {
    /// Every record kind the tables describe, read off their descriptions
    /// (Entitlements/RecordDescriptions.swift, ReceiptInAppDescription).
    package static var records: [RecordEntry] {
        [RecordEntry(record: "transaction", fields: entries(TransactionDescription.memberSpecs)),
         RecordEntry(record: "renewal_info", fields: entries(RenewalInfoDescription.memberSpecs)),
         RecordEntry(record: "receipt_in_app", fields: entries(ReceiptInAppDescription.memberSpecs))]
    }

    /// The members in this listing's older words. A nested object that the record's own table
    /// describes (`commitment`) lists its fields; an object described elsewhere does not.
    private static func entries(_ specs: [MemberSpec]) -> [FieldEntry] {
        specs.map { s in
            var nested: [FieldEntry] = []
            if case .object(let o) = s.type, !(o is any SurfaceObject.Type) { nested = entries(o.memberSpecs) }
            return FieldEntry(name: "\(s.name)", type: type(s.type), written: s.presence == .always ? "always" : "when_present",
                              attribute: s.attribute, fields: nested)
        }
    }

    private static func type(_ t: MemberType) -> String {
        switch t {
        case .string: return "string"
        case .integer: return "integer"
        case .ms: return "date_ms"
        case .boolean: return "boolean"
        case .array(.string): return "string_array"
        case .object, .map, .json: return "object"
        case .array: return "array"
        }
    }
}
