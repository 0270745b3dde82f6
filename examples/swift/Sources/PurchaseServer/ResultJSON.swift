// Small JSON helpers around the library's documents, with Foundation's JSONSerialization.
//
// The typed reports say everything a decision needs; JSON is used only where the library itself
// takes JSON back: the normalised transaction and renewal-info objects a result writes are what
// `computeEntitlements` reads, so the store keeps them as the library wrote them.

import Foundation

enum ResultJSON {
    /// The object at `path` inside a result document, as its own JSON text; nil when a member
    /// on the way is missing, null, or not an object.
    static func object(in document: [UInt8], at path: [String]) -> [UInt8]? {
        guard var value = try? JSONSerialization.jsonObject(with: Data(document)) else { return nil }
        for name in path {
            guard let members = value as? [String: Any], let next = members[name], !(next is NSNull) else { return nil }
            value = next
        }
        guard value is [String: Any], let data = try? JSONSerialization.data(withJSONObject: value) else { return nil }
        return Array(data)
    }

    /// `{"transactions": [...], "renewal_info": [...]}`, the input of `computeEntitlements`, from
    /// stored objects (each already a JSON object).
    static func entitlementInput(transactions: [[UInt8]], renewals: [[UInt8]]) -> [UInt8] {
        func list(_ items: [[UInt8]]) -> [UInt8] {
            var out: [UInt8] = [UInt8(ascii: "[")]
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out += item
            }
            out.append(UInt8(ascii: "]"))
            return out
        }
        return Array(#"{"transactions":"#.utf8) + list(transactions) + Array(#","renewal_info":"#.utf8) + list(renewals)
            + [UInt8(ascii: "}")]
    }
}

/// A JSON answer: an encodable body and its HTTP status.
struct Answer: Sendable {
    var status: Int
    var body: [UInt8]

    init(_ status: Int, _ body: some Encodable) {
        self.status = status
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.body = (try? Array(encoder.encode(body))) ?? Array(#"{"error":"unencodable answer"}"#.utf8)
    }

    static func error(_ status: Int, _ message: String) -> Answer {
        Answer(status, ["error": message])
    }
}
