// The device id a host passes (options.device_id), as the bytes Apple hashed into the receipt.

/// Turns the textual device id a host has into the bytes the receipt hash was made from.
enum DeviceIdentifier {
    static func parse(_ text: String) -> [UInt8]? {
        var nibbles: [UInt8] = []
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "-"), UInt8(ascii: ":"): continue
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(c - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(c - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(c - 55)
            default: return nil
            }
        }
        guard nibbles.count == 32 || nibbles.count == 12 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(nibbles.count / 2)
        var i = 0
        while i + 1 < nibbles.count {
            out.append(nibbles[i] << 4 | nibbles[i + 1])
            i += 2
        }
        return out
    }
}
