// The description (JSON/Surface.swift) of the records a field table reads and writes: a
// transaction and a renewal info, with their nested `commitment` and `advanced_commerce`. Their
// rows (RecordFieldTables.swift) are the description: each names the member, its type and its
// meaning once, and the same row reads and writes it.

extension FieldSpec {
    /// The member as the description states it.
    var memberSpec: MemberSpec {
        let type: MemberType
        switch kind {
        case .string, .code: type = .string
        case .int: type = .integer
        case .date: type = .ms
        case .bool, .flag: type = .boolean
        case .strings: type = .array(.string)
        }
        let optional: Bool
        switch storage {
        case .string, .int, .bool, .id, .view: optional = false
        case .optionalString, .optionalInt, .optionalBool, .optionalStrings, .optionalID, .decimal: optional = true
        }
        // A required text that is empty is written as null.
        let nullable = output == .always && (optional || required != 0)
        return MemberSpec(snake, type, nullable: nullable, presence: output == .always ? .always : .whenPresent, appleName: camel, meaning)
    }
}

extension RecordTable {
    /// The rows outside the nested object, then the nested object and `advanced_commerce`.
    func memberSpecs(nested object: any SurfaceDescribed.Type, meaning: StaticString) -> [MemberSpec] {
        allSpecs.filter { !$0.nested }.map(\.memberSpec)
            + [MemberSpec(nested.snake, .object(object), presence: .whenPresent, appleName: nested.camel, meaning),
               MemberSpec(advancedCommerceMember, .object(AdvancedCommerceMember.self), presence: .whenPresent, appleName: "advancedCommerceInfo",
                          "Advanced Commerce: the items sold through the one App Store product")]
    }

    var nestedMemberSpecs: [MemberSpec] { allSpecs.filter(\.nested).map(\.memberSpec) }
}

package enum TransactionDescription: SurfaceDescribed {
    package static let objectName: StaticString = "transaction"
    package static let meaning: StaticString = "a normalised transaction: the same members whether it came from a receipt, /verifyReceipt, a signed transaction or the entitlement input"
    package static var memberSpecs: [MemberSpec] {
        TransactionRecord.fields.memberSpecs(nested: TransactionCommitmentDescription.self,
                                             meaning: "a billing plan's commitment (monthly payments toward a longer term)")
    }
}

package enum TransactionCommitmentDescription: SurfaceDescribed {
    package static let objectName: StaticString = "transaction_commitment"
    package static let meaning: StaticString = "a transaction's commitment (Apple's commitmentInfo)"
    package static var memberSpecs: [MemberSpec] { TransactionRecord.fields.nestedMemberSpecs }
}

package enum RenewalInfoDescription: SurfaceDescribed {
    package static let objectName: StaticString = "renewal_info"
    package static let meaning: StaticString = "a normalised renewal info: what the subscription does next"
    package static var memberSpecs: [MemberSpec] {
        RenewalInfo.fields.memberSpecs(nested: RenewalCommitmentDescription.self, meaning: "the commitment's renewal")
    }
}

package enum RenewalCommitmentDescription: SurfaceDescribed {
    package static let objectName: StaticString = "renewal_commitment"
    package static let meaning: StaticString = "a renewal info's commitment (Apple's commitmentInfo)"
    package static var memberSpecs: [MemberSpec] { RenewalInfo.fields.nestedMemberSpecs }
}
