// A BER/DER reader that gives a tree of nodes over the input bytes, for the receipt envelope and
// the attribute sets that the direct TLV walks decline (Xcode's indefinite lengths, odd input).
// It replaced swift-asn1 in the library, which imports FoundationEssentials and so carried it
// into libiapverify.so. Its checks, their order and its error names follow swift-asn1's parser,
// so every input keeps its verdict and reason (BERTreeTests compares the two on every fixture).

/// A tag: class and number. Equality ignores the constructed bit (as swift-asn1's did); callers
/// check the content's form themselves.
struct BERTag: Equatable {
    /// The top two bits of the identifier octet: 0 universal, 1 application, 2 context, 3 private.
    var tagClass: UInt8
    var number: UInt

    static let integer = BERTag(tagClass: 0, number: 2)
    static let octetString = BERTag(tagClass: 0, number: 4)
    static let null = BERTag(tagClass: 0, number: 5)
    static let objectIdentifier = BERTag(tagClass: 0, number: 6)
    static let sequence = BERTag(tagClass: 0, number: 16)
    static let set = BERTag(tagClass: 0, number: 17)
    static let context0 = BERTag(tagClass: 2, number: 0)
    static let context1 = BERTag(tagClass: 2, number: 1)
}

/// Why bytes are not BER (or DER). The names are the ones receipt reasons have always quoted.
enum BERError: String, Error {
    case invalidObject = "invalidASN1Object"
    case truncated = "truncatedASN1Field"
    case unsupportedLength = "unsupportedFieldLength"
}

struct BERNode {
    var identifier: BERTag
    var content: Content
    /// The whole TLV (for an indefinite length, up to and including its end-of-contents octets).
    var encodedBytes: ArraySlice<UInt8>

    enum Content {
        case constructed(BERChildren)
        case primitive(ArraySlice<UInt8>)
    }
}

/// The children of a constructed node, in order.
struct BERChildren: Sequence {
    fileprivate let bytes: ArraySlice<UInt8>
    fileprivate let entries: ArraySlice<BERTree.Entry>
    fileprivate let depth: Int

    func makeIterator() -> Iterator { Iterator(bytes: bytes, rest: entries, depth: depth) }

    struct Iterator: IteratorProtocol {
        fileprivate let bytes: ArraySlice<UInt8>
        fileprivate var rest: ArraySlice<BERTree.Entry>
        fileprivate let depth: Int

        mutating func next() -> BERNode? {
            guard let e = rest.popFirst() else { return nil }
            let encoded = bytes[e.encoded]
            guard e.constructed else {
                return BERNode(identifier: e.tag, content: .primitive(bytes[e.content]), encodedBytes: encoded)
            }
            // Its descendants are the entries that follow it deeper than it.
            let inner = rest.prefix { $0.depth > e.depth }
            rest = rest.dropFirst(inner.count)
            return BERNode(identifier: e.tag, content: .constructed(BERChildren(bytes: bytes, entries: inner, depth: e.depth)),
                           encodedBytes: encoded)
        }
    }
}

enum BERTree {
    /// Deeper nesting is refused (docs/limits.md); no receipt comes near it.
    static let maxDepth = 50

    /// Parses one BER element that must cover `bytes` exactly.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(BERError) -> BERNode { try parse(bytes, der: false) }
    static func parse(_ bytes: [UInt8]) throws(BERError) -> BERNode { try parse(bytes[...], der: false) }

    /// The same, refusing what DER forbids in a length: the indefinite form and non-minimal forms.
    static func parseDER(_ bytes: [UInt8]) throws(BERError) -> BERNode { try parse(bytes[...], der: true) }

    /// A node in document order; a constructed node's descendants follow it, deeper.
    fileprivate struct Entry {
        var tag: BERTag
        var depth: Int
        var constructed: Bool
        var encoded: Range<Int>
        var content: Range<Int>
    }

    private static func parse(_ bytes: ArraySlice<UInt8>, der: Bool) throws(BERError) -> BERNode {
        var entries: [Entry] = []
        entries.reserveCapacity(16)
        var at = bytes.startIndex
        try element(bytes, &at, end: bytes.endIndex, depth: 1, der: der, into: &entries)
        guard at == bytes.endIndex else { throw .invalidObject }  // trailing bytes
        var top = BERChildren(bytes: bytes, entries: entries[...], depth: 0).makeIterator()
        return top.next()!  // element() appended the root or threw
    }

    /// Reads the element at `at` (which it advances past it), all of it before `end`.
    private static func element(_ b: ArraySlice<UInt8>, _ at: inout Int, end: Int, depth: Int, der: Bool,
                                into entries: inout [Entry]) throws(BERError) {
        guard depth <= maxDepth else { throw .invalidObject }
        let start = at
        guard at < end else { throw .truncated }
        let first = b[at]
        at += 1
        let constructed = first & 0x20 != 0
        var number = UInt(first & 0x1F)
        if number == 0x1F {
            // High tag number: base-128 digits up to the first octet with bit 8 clear.
            guard let last = b[at..<end].firstIndex(where: { $0 & 0x80 == 0 }) else { throw .invalidObject }
            guard b[at] != 0x80, last - at < 9 else { throw .invalidObject }  // minimal, at most 63 bits
            number = 0
            for k in at...last { number = number << 7 | UInt(b[k] & 0x7F) }
            at = last + 1
            guard number >= 0x1F else { throw .invalidObject }  // fits the short form
        }
        let tag = BERTag(tagClass: first >> 6, number: number)

        guard at < end else { throw .truncated }
        let lengthOctet = b[at]
        at += 1
        var length: UInt? = UInt(lengthOctet)  // nil: indefinite
        if lengthOctet == 0x80 {
            length = nil
        } else if lengthOctet & 0x80 != 0 {
            let n = Int(lengthOctet & 0x7F)
            guard end - at >= n else { throw .truncated }
            guard n <= 8 else { throw .invalidObject }
            var value: UInt = 0
            for k in at..<(at + n) { value = value << 8 | UInt(b[k]) }
            at += n
            if der {
                let bits = UInt.bitWidth - value.leadingZeroBitCount
                guard bits >= 8, n <= (bits + 7) / 8 else { throw .unsupportedLength }
            }
            length = value
        }
        // Universal 0 is the end-of-contents marker, consumed below, never an element.
        guard !(tag.tagClass == 0 && tag.number == 0) else { throw .invalidObject }

        guard let length else {
            guard !der, constructed else { throw .unsupportedLength }
            let index = entries.count
            entries.append(Entry(tag: tag, depth: depth, constructed: true, encoded: start..<start, content: at..<at))
            let contentStart = at
            while !(end - at >= 2 && b[at] == 0 && b[at + 1] == 0) {
                guard at < end else { throw .truncated }
                try element(b, &at, end: end, depth: depth + 1, der: der, into: &entries)
            }
            entries[index].content = contentStart..<at
            at += 2
            entries[index].encoded = start..<at
            return
        }
        guard let count = Int(exactly: length) else { throw .invalidObject }
        guard end - at >= count else { throw .truncated }
        let contentEnd = at + count
        entries.append(Entry(tag: tag, depth: depth, constructed: constructed, encoded: start..<contentEnd, content: at..<contentEnd))
        if constructed {
            while at < contentEnd {
                try element(b, &at, end: contentEnd, depth: depth + 1, der: der, into: &entries)
            }
        }
        at = contentEnd
    }

    /// An OBJECT IDENTIFIER's content bytes in dotted form, nil when they are not a valid OID
    /// (no subidentifier, an unterminated one, a leading 0x80, or one over 9 octets). The first
    /// two arcs are the first subidentifier's quotient and remainder by 40, as reasons always said.
    static func dottedOID(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty else { return nil }
        var arcs: [UInt] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            guard let last = bytes[i...].firstIndex(where: { $0 & 0x80 == 0 }), bytes[i] != 0x80, last - i < 9 else {
                return nil
            }
            var value: UInt = 0
            for k in i...last { value = value << 7 | UInt(bytes[k] & 0x7F) }
            if arcs.isEmpty {
                arcs.append(value / 40)
                arcs.append(value % 40)
            } else {
                arcs.append(value)
            }
            i = last + 1
        }
        return arcs.map { String($0) }.joined(separator: ".")
    }
}
