/// Walks a `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
///
/// A receipt holds thousands of these small attributes, and no node is built for any of them in
/// the common case, definite-length encoding, which is read by a direct walk over TLV headers;
/// anything else (BER indefinite lengths from Xcode, or malformed input) goes through BERTree's BER
/// parser, which gives the same attributes or the precise error. A test decodes every fixture
/// both ways and compares.
enum AttributeSet {
    /// Folds `body` over the attributes in order, from the state `initial` makes. One walk reads
    /// the common encoding; when the bytes turn out not to be plain DER halfway, whatever the walk
    /// applied is dropped and BERTree's reading starts again from a fresh state, so a state
    /// is never half-applied. A value `body` refuses is thrown only once the whole shape is known
    /// good. (A maker, not a value: a state held twice would be copied on its first change.)
    static func fold<State>(_ bytes: ArraySlice<UInt8>, what: String, from initial: () -> State,
                            _ body: (inout State, Int64, Int64, ArraySlice<UInt8>) throws(PayloadProblem) -> Void)
        throws(PayloadProblem) -> State {
        var state = initial()
        var failure: PayloadProblem?
        let plain = walk(bytes) { type, version, value in
            if failure == nil {
                do throws(PayloadProblem) { try body(&state, type, version, value) } catch { failure = error }
            }
            return true
        }
        if plain {
            if let failure { throw failure }
            return state
        }
        state = initial()
        try viaTree(bytes, what: what) { (type, version, value) throws(PayloadProblem) in
            try body(&state, type, version, value)
        }
        return state
    }

    struct Attribute {
        var type: Int64
        var version: Int64
        var value: ArraySlice<UInt8>
    }

    /// Every attribute, by the direct walk; nil when the bytes are not plain definite-length TLVs
    /// of that shape.
    static func direct(_ bytes: ArraySlice<UInt8>) -> [Attribute]? {
        var out: [Attribute] = []
        out.reserveCapacity(bytes.count / 12)  // an attribute takes at least 11 bytes
        guard walk(bytes, { out.append(Attribute(type: $0, version: $1, value: $2)); return true }) else { return nil }
        return out
    }

    /// The attributes of two types only, values left undecoded. This is the only payload work
    /// done before the signature is checked, so it must cost little per attribute whatever an
    /// attacker puts there: nothing is kept of the others.
    static func find(_ first: Int64, _ second: Int64, in bytes: ArraySlice<UInt8>) -> [Attribute]? {
        var out: [Attribute] = []
        // In place: a slice is made only for the two types asked for.
        let base = bytes.startIndex
        let whole = bytes.withUnsafeBufferPointer { p in
            walkRaw(p) { type, version, start, end in
                if type == first || type == second {
                    out.append(Attribute(type: type, version: version, value: bytes[(base + start)..<(base + end)]))
                }
                return true
            }
        }
        return whole ? out : nil
    }

    /// How many attributes of `type` there are; nil when the walk declines the bytes.
    static func count(_ type: Int64, in bytes: ArraySlice<UInt8>) -> Int? {
        var n = 0
        let whole = bytes.withUnsafeBufferPointer { p in walkRaw(p) { t, _, _, _ in if t == type { n += 1 }; return true } }
        return whole ? n : nil
    }

    /// One walk over raw memory: `visit` sees each attribute in order and returns false to stop.
    /// False when the bytes are not a SET of plain definite-length attribute TLVs (or `visit`
    /// stopped the walk).
    @inline(__always)
    private static func walk(_ bytes: ArraySlice<UInt8>, _ visit: (Int64, Int64, ArraySlice<UInt8>) -> Bool) -> Bool {
        bytes.withUnsafeBufferPointer { p -> Bool in
            let base = bytes.startIndex
            return walkRaw(p) { type, version, start, end in visit(type, version, bytes[(base + start)..<(base + end)]) }
        }
    }

    /// The same walk, giving each value as offsets into `p` (no slice, so no reference counting
    /// per attribute: the in-app records are read this way).
    @inline(__always)
    static func walkRaw(_ p: UnsafeBufferPointer<UInt8>, _ visit: (Int64, Int64, Int, Int) -> Bool) -> Bool {
        guard let set = RawTLV.header(p, 0, end: p.count), set.tag == 0x31, set.end == p.count else { return false }
        var i = set.start
        while i < set.end {
            if let a = shortFormAttribute(p, i, set.end) {
                guard visit(a.type, a.version, a.start, a.end) else { return false }
                i = a.next
                continue
            }
            guard let seq = RawTLV.header(p, i, end: set.end), seq.tag == 0x30,
                  let t = RawTLV.header(p, seq.start, end: seq.end), t.tag == 0x02,
                  let v = RawTLV.header(p, t.end, end: seq.end), v.tag == 0x02,
                  let o = RawTLV.header(p, v.end, end: seq.end), o.tag == 0x04, o.end == seq.end,
                  let type = RawTLV.int64(p, t.start, t.end), let version = RawTLV.int64(p, v.start, v.end) else { return false }
            guard visit(type, version, o.start, o.end) else { return false }
            i = seq.end
        }
        return true
    }

    /// The attribute at `i` when every length in it is in short form and its type and version
    /// take one or two bytes (every attribute Apple signs): read with fewer checks than the
    /// general walk needs, to the same values. nil sends the attribute to the general walk,
    /// which reads it or refuses the set.
    @inline(__always)
    private static func shortFormAttribute(_ p: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int)
        -> (type: Int64, version: Int64, start: Int, end: Int, next: Int)? {
        // 30 L | 02 n t.. | 02 m v.. | 04 l value
        guard i + 10 <= end, p[i] == 0x30, p[i + 1] < 0x80, p[i + 2] == 0x02 else { return nil }
        let next = i + 2 + Int(p[i + 1])
        let n = Int(p[i + 3])
        guard next <= end, n == 1 || n == 2 else { return nil }
        let v = i + 4 + n
        guard v + 3 <= next, p[v] == 0x02 else { return nil }
        let m = Int(p[v + 1])
        guard m == 1 || m == 2 else { return nil }
        let o = v + 2 + m
        guard o + 2 <= next, p[o] == 0x04, p[o + 1] < 0x80, o + 2 + Int(p[o + 1]) == next else { return nil }
        @inline(__always) func integer(_ at: Int, _ count: Int) -> Int64 {
            count == 1 ? Int64(Int8(bitPattern: p[at])) : Int64(Int16(bitPattern: UInt16(p[at]) << 8 | UInt16(p[at + 1])))
        }
        return (integer(i + 4, n), integer(v + 2, m), o + 2, next, next)
    }

    /// The reference decoding as a BER tree, used for everything the walk declines.
    static func viaTree(_ bytes: ArraySlice<UInt8>, what: String,
                             _ body: (Int64, Int64, ArraySlice<UInt8>) throws(PayloadProblem) -> Void) throws(PayloadProblem) {
        let root: BERNode
        do {
            root = try BERTree.parse(bytes)
        } catch {
            throw .malformed("\(what) is not a valid DER/BER structure")
        }
        guard root.identifier == .set, case .constructed(let attributes) = root.content else {
            throw .malformed("\(what) is not a SET of receipt attributes")
        }
        for node in attributes {
            guard node.identifier == .sequence, case .constructed(let fields) = node.content else {
                throw .malformed("a receipt attribute is not a SEQUENCE")
            }
            var it = fields.makeIterator()
            guard let t = it.next(), let v = it.next(), let o = it.next(), it.next() == nil else {
                throw .malformed("a receipt attribute does not have exactly 3 fields")
            }
            guard let type = ReceiptPayloadDecoder.int64(t), let version = ReceiptPayloadDecoder.int64(v) else {
                throw .malformed("a receipt attribute type or version is not a 64-bit INTEGER")
            }
            guard o.identifier == .octetString, case .primitive(let value) = o.content else {
                throw .malformed("attribute \(type) value is not a primitive OCTET STRING")
            }
            try body(type, version, value)
        }
    }
}
