// The whole description of the library's surface (JSON/Surface.swift) in one document: every
// result document with the objects it holds, every options key with the entry points that read
// it, and every config key. `iapverify fields --json` prints it; `make test` generates the JSON
// Schemas and the docs tables from it and holds the bindings to it (docs/contributing.md).

/// One document a C call reads or writes: its parts' members, in order.
package struct SurfaceDocument: Sendable {
    package let name: String
    package let parts: [any SurfaceDescribed.Type]
    /// The JSON Schema in docs/schema/ that validates it.
    package let schema: String
    /// The C calls that write (or read) it.
    package let calls: [String]
    package let meaning: String

    package var memberSpecs: [MemberSpec] { parts.flatMap { $0.memberSpecs } }
}

/// What an entitlement input (iapv_compute_entitlements) holds.
package enum EntitlementInputMember: SurfaceObject {
    case transactions, renewalInfo

    package static let objectName: StaticString = "entitlement_input"
    package static let meaning: StaticString = "iapv_compute_entitlements's input: transactions and renewal infos a host kept, in results' names"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .transactions: MemberSpec("transactions", .array(.object(TransactionDescription.self)), "the transactions, as results write them (snake_case)")
        case .renewalInfo: MemberSpec("renewal_info", .array(.object(RenewalInfoDescription.self)), presence: .whenPresent, "the renewal infos, as results write them")
        }
    }
}

package enum SurfaceCatalog {
    private typealias Head = ResultHeadMember
    private typealias Grants = GrantMember

    package static let documents: [SurfaceDocument] = [
        SurfaceDocument(name: "receipt_result", parts: [Head.self, ReceiptResultMember.self, Grants.self], schema: "receipt-result.schema.json",
                        calls: ["iapv_verify_receipt"], meaning: "an app receipt, verified"),
        SurfaceDocument(name: "inspect_result", parts: [Head.self, ReceiptResultMember.self, Grants.self], schema: "inspect-result.schema.json",
                        calls: [], meaning: "`iapverify inspect`: a receipt decoded without verification (verdict unverified), no revocation"),
        SurfaceDocument(name: "response_result", parts: [Head.self, ResponseResultMember.self, Grants.self], schema: "response-result.schema.json",
                        calls: ["iapv_interpret_response"], meaning: "a /verifyReceipt answer, interpreted"),
        SurfaceDocument(name: "entitlements_result", parts: [Head.self, Grants.self], schema: "entitlements-result.schema.json",
                        calls: ["iapv_compute_entitlements"], meaning: "entitlements from a host's own records"),
        SurfaceDocument(name: "jws_result", parts: [Head.self, JWSResultMember.self, Grants.self], schema: "jws-result.schema.json",
                        calls: ["iapv_verify_jws"], meaning: "a StoreKit 2 signed payload, verified"),
        SurfaceDocument(name: "api_response_result", parts: [Head.self, APIResponseResultMember.self, Grants.self],
                        schema: "api-response-result.schema.json", calls: ["iapv_interpret_api_response"], meaning: "an App Store Server API answer, verified"),
        SurfaceDocument(name: "api_request_result", parts: [APIRequestResultMember.self], schema: "api-request-result.schema.json",
                        calls: ["iapv_api_request"], meaning: "an App Store Server API request, built and signed"),
        SurfaceDocument(name: "transaction_receipt_result", parts: [Head.self, TransactionReceiptMember.self],
                        schema: "transaction-receipt-result.schema.json", calls: ["iapv_read_transaction_receipt"], meaning: "an iOS 6 transaction receipt, read"),
        SurfaceDocument(name: "api_token_result", parts: [APITokenMember.self], schema: "", calls: ["iapv_api_token"], meaning: "a bearer token"),
        SurfaceDocument(name: "sign_result", parts: [SignatureResultMember.self], schema: "", calls: ["iapv_sign"], meaning: "a signature"),
        SurfaceDocument(name: "config", parts: [ConfigMember.self], schema: "config.schema.json", calls: ["iapv_verifier_new"],
                        meaning: "the verifier config (input)"),
        SurfaceDocument(name: "entitlement_input", parts: [EntitlementInputMember.self], schema: "entitlement-input.schema.json",
                        calls: ["iapv_compute_entitlements"], meaning: "the entitlement input (input)"),
    ]

    /// Every object a document or an option holds, each once, in the order first reached.
    package static var objects: [any SurfaceDescribed.Type] {
        var seen: [String] = []
        var out: [any SurfaceDescribed.Type] = []
        func visit(_ specs: [MemberSpec]) {
            for spec in specs {
                let object: (any SurfaceDescribed.Type)?
                switch spec.type {
                case .object(let o), .array(.object(let o)), .map(.object(let o)): object = o
                default: object = nil
                }
                guard let o = object, !seen.contains("\(o.objectName)") else { continue }
                seen.append("\(o.objectName)")
                out.append(o)
                visit(o.memberSpecs)
            }
        }
        for d in documents { visit(d.memberSpecs) }
        visit(OptionKey.allCases.map(\.spec))
        return out
    }

    /// The description as one JSON document (the same core always gives the same bytes).
    package static func json() -> [UInt8] {
        var w = JSONWriter(capacity: 65536)
        w.beginObject()
        w.key(text: "documents")
        w.beginArray()
        for d in documents {
            w.beginObject()
            w.key(text: "name"); w.string(d.name)
            w.key(text: "object"); w.string(d.name)
            w.key(text: "schema"); if d.schema.isEmpty { w.null() } else { w.string(d.schema) }
            w.key(text: "calls"); w.beginArray(); for c in d.calls { w.string(c) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key(text: "objects")
        w.beginObject()
        for d in documents { writeObject(d.name, meaning: d.meaning, d.memberSpecs, into: &w) }
        for o in objects { writeObject("\(o.objectName)", meaning: "\(o.meaning)", o.memberSpecs, into: &w) }
        w.endObject()
        w.key(text: "options")
        w.beginObject()
        w.key(text: "entry_points")
        w.beginObject()
        for e in EntryPoint.allCases {
            w.key(text: e.rawValue)
            w.beginArray()
            for k in OptionKey.allCases where k.readBy.contains(e) { w.string(k.name) }
            w.endArray()
        }
        w.endObject()
        w.key(text: "keys")
        w.beginArray()
        for k in OptionKey.allCases {
            w.beginObject()
            writeMember(k.spec, into: &w)
            w.key(text: "read_by"); w.beginArray(); for e in k.readBy { w.string(e.rawValue) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.key(text: "config")
        w.beginObject()
        w.key(text: "keys")
        w.beginArray()
        for m in ConfigMember.allCases { w.beginObject(); writeMember(m.spec, into: &w); w.endObject() }
        w.endArray()
        w.endObject()
        writeCalls(into: &w)
        w.endObject()
        return w.bytes
    }

    /// The Server API's input documents: the signer config, a call with every endpoint's
    /// parameters, query and body, and a signature request with the kinds each member serves.
    private static func writeCalls(into w: inout JSONWriter) {
        w.key(text: "calls")
        w.beginObject()
        w.key(text: "iapv_signer_new")
        w.beginObject()
        w.key(text: "keys"); w.beginArray()
        for m in SignerConfigMember.allCases { w.beginObject(); writeMember(m.spec, into: &w); w.endObject() }
        w.endArray()
        w.endObject()
        w.key(text: "iapv_api_request")
        w.beginObject()
        w.key(text: "keys"); w.beginArray()
        for m in CallMember.allCases { w.beginObject(); writeMember(m.spec, into: &w); w.endObject() }
        for p in APIParameter.allCases {
            w.beginObject()
            w.key(text: "name"); w.string(p.rawValue)
            w.key(text: "type"); w.string("string")
            w.key(text: "presence"); w.string("when_present")
            w.key(text: "meaning"); w.string(p.meaning)
            w.key(text: "endpoints"); w.beginArray(); for e in p.endpoints { w.string(e.rawValue) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key(text: "endpoints"); w.beginArray()
        for e in APIEndpoint.allCases { writeEndpoint(e, into: &w) }
        w.endArray()
        w.endObject()
        w.key(text: "iapv_sign")
        w.beginObject()
        w.key(text: "keys"); w.beginArray()
        for m in SignRequestMember.allCases {
            w.beginObject()
            writeMember(m.spec, into: &w)
            w.key(text: "kinds"); w.beginArray(); for k in m.kinds { w.string(k.rawValue) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.endObject()
    }

    private static func writeEndpoint(_ e: APIEndpoint, into w: inout JSONWriter) {
        let spec = e.spec
        w.beginObject()
        w.key(text: "name"); w.string(e.rawValue)
        w.key(text: "method"); w.string(spec.method)
        w.key(text: "path"); w.string(spec.pathTemplate)
        w.key(text: "parameters"); w.beginArray()
        for p in spec.pathParameters { w.string(p.rawValue) }
        for (p, _) in spec.queryParameters.sorted(by: { $0.value < $1.value }) { w.string(p.rawValue) }
        w.endArray()
        w.key(text: "query"); w.beginArray()
        for q in spec.query { w.beginObject(); w.key(text: "name"); w.string(q.name); w.key(text: "type"); w.string(q.type.describe); w.endObject() }
        w.endArray()
        w.key(text: "body")
        switch spec.body {
        case .json(let fields)?:
            w.beginObject()
            w.key(text: "content_type"); w.string("application/json")
            w.key(text: "fields"); w.beginArray()
            for f in fields {
                w.beginObject()
                w.key(text: "name"); w.string(f.name)
                w.key(text: "type"); w.string(f.type.describe)
                w.key(text: "required"); w.bool(f.required)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        case .binary(let type, let maxBytes)?:
            w.beginObject()
            w.key(text: "content_type"); w.string(type)
            w.key(text: "max_bytes"); w.int(Int64(maxBytes))
            w.endObject()
        case nil:
            w.null()
        }
        w.key(text: "deprecated"); w.bool(e.replacement != nil)
        w.endObject()
    }

    private static func writeObject(_ name: String, meaning: String, _ specs: [MemberSpec], into w: inout JSONWriter) {
        w.key(text: name)
        w.beginObject()
        w.key(text: "meaning"); w.string(meaning)
        w.key(text: "members")
        w.beginArray()
        for s in specs { w.beginObject(); writeMember(s, into: &w); w.endObject() }
        w.endArray()
        w.endObject()
    }

    private static func writeMember(_ s: MemberSpec, into w: inout JSONWriter) {
        w.key(text: "name"); w.string("\(s.name)")
        let (type, items, object) = describe(s.type)
        w.key(text: "type"); w.string(type)
        if let items { w.key(text: "items"); w.string(items) }
        if let object { w.key(text: "object"); w.string(object) }
        w.key(text: "nullable"); w.bool(s.nullable)
        w.key(text: "presence"); w.string(s.presence == .always ? "always" : "when_present")
        if let words = s.values.words {
            w.key(text: "values"); w.beginArray(); for v in words { w.string(v) }; w.endArray()
            if case .open = s.values { w.key(text: "open"); w.bool(true) }
        }
        if let d = s.defaultJSON { w.key(text: "default"); w.rawJSON(Array("\(d)".utf8)) }
        if let a = s.appleName { w.key(text: "apple_name"); w.string("\(a)") }
        if let a = s.attribute { w.key(text: "receipt_attribute"); w.int(a) }
        w.key(text: "meaning"); w.string("\(s.meaning)")
    }

    private static func describe(_ t: MemberType) -> (String, String?, String?) {
        func element(_ e: MemberElement) -> (String, String?) {
            switch e {
            case .string: return ("string", nil)
            case .integer: return ("integer", nil)
            case .boolean: return ("boolean", nil)
            case .json: return ("json", nil)
            case .object(let o): return ("object", "\(o.objectName)")
            }
        }
        switch t {
        case .string: return ("string", nil, nil)
        case .integer: return ("integer", nil, nil)
        case .ms: return ("ms", nil, nil)
        case .boolean: return ("boolean", nil, nil)
        case .json: return ("json", nil, nil)
        case .object(let o): return ("object", nil, "\(o.objectName)")
        case .map(let e): let (i, o) = element(e); return ("map", i, o)
        case .array(let e): let (i, o) = element(e); return ("array", i, o)
        }
    }
}
