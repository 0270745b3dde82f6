// RFC 3339 timestamps as receipts carry them ("2015-07-23T15:03:04Z", Xcode: "+0300"),
// converted to Unix milliseconds without Foundation or the C library's time zone state.

enum RFC3339 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM|±HHMM)`. Returns nil for anything else.
    static func milliseconds<C: Collection>(_ text: C) -> Int64? where C.Element == UInt8 {
        // Read in place: receipts hold several dates per purchase, and a copy is an allocation.
        if let parsed = text.withContiguousStorageIfAvailable({ milliseconds(utf8: $0) }) { return parsed }
        return Array(text).withUnsafeBufferPointer { milliseconds(utf8: $0) }
    }

    private static func milliseconds(utf8 s: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard s.count >= 20 else { return nil }
        // Inlined, with one unsigned compare a digit (a byte below "0" wraps above 9): a receipt
        // holds four dates a purchase.
        @inline(__always) func digits(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= s.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                let d = s[i] &- 48
                guard d < 10 else { return nil }
                v = v &* 10 &+ Int64(d)
            }
            return v
        }
        guard let year = digits(0, 4), s[4] == UInt8(ascii: "-"),
              let month = digits(5, 2), s[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: "t"),
              let hour = digits(11, 2), s[13] == UInt8(ascii: ":"),
              let minute = digits(14, 2), s[16] == UInt8(ascii: ":"),
              let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var millis: Int64 = 0
        if i < s.count, s[i] == UInt8(ascii: ".") {
            i += 1
            var scale: Int64 = 100
            let start = i
            while i < s.count, s[i] >= 48, s[i] <= 57 {
                millis += Int64(s[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start, i - start <= 9 else { return nil }
        }
        guard i < s.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch s[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = s[i] == UInt8(ascii: "+") ? 1 : -1
            guard let oh = digits(i + 1, 2) else { return nil }
            var j = i + 3
            if j < s.count, s[j] == UInt8(ascii: ":") { j += 1 }
            guard let om = digits(j, 2), oh <= 23, om <= 59 else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            i = j + 2
        default:
            return nil
        }
        guard i == s.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1000 + millis
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 4, 6, 9, 11: return 30
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        default: return 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's civil algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// "<subject><verb><date>": a reason's text made as one String (interpolating the subject and
    /// a formatted date made a String per part and grew the result).
    static func sentence(_ subject: String, _ verb: StaticString, _ ms: Int64) -> String {
        guard (0...9999).contains(civil(ms).year) else { return subject + "\(verb)" + format(ms) }
        var subject = subject
        return subject.withUTF8 { s in
            let v = verb.utf8CodeUnitCount
            return String(unsafeUninitializedCapacity: s.count + v + 20) { out in
                let base = out.baseAddress!
                if let from = s.baseAddress { base.initialize(from: from, count: s.count) }
                (base + s.count).initialize(from: verb.utf8Start, count: v)
                write(ms, into: base + s.count + v)
                return s.count + v + 20
            }
        }
    }

    /// Unix milliseconds as a proleptic Gregorian date and the seconds into its day.
    private static func civil(_ ms: Int64) -> (year: Int64, month: Int64, day: Int64, seconds: Int64) {
        let secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        var days = secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400
        let rem = secs - days * 86_400
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d, rem)
    }

    /// Writes `YYYY-MM-DDTHH:MM:SSZ` (20 bytes) for a date whose year is 0...9999.
    private static func write(_ ms: Int64, into out: UnsafeMutablePointer<UInt8>) {
        let (y, m, d, rem) = civil(ms)
        func put(_ v: Int64, _ width: Int, at i: Int) {
            var v = v
            for k in stride(from: i + width - 1, through: i, by: -1) {
                out[k] = UInt8(truncatingIfNeeded: 48 + v % 10)
                v /= 10
            }
        }
        put(y, 4, at: 0); out[4] = UInt8(ascii: "-"); put(m, 2, at: 5); out[7] = UInt8(ascii: "-")
        put(d, 2, at: 8); out[10] = UInt8(ascii: "T"); put(rem / 3600, 2, at: 11); out[13] = UInt8(ascii: ":")
        put(rem / 60 % 60, 2, at: 14); out[16] = UInt8(ascii: ":"); put(rem % 60, 2, at: 17); out[19] = UInt8(ascii: "Z")
    }

    /// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SSZ` (for messages and the CLI).
    static func format(_ ms: Int64) -> String {
        let (y, m, d, rem) = civil(ms)
        if (0...9999).contains(y) {
            // The usual case, written into one 20-byte buffer: no String per padded part.
            return String(unsafeUninitializedCapacity: 20) { out in
                write(ms, into: out.baseAddress!)
                return 20
            }
        }
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(rem / 3600, 2)):\(pad(rem / 60 % 60, 2)):\(pad(rem % 60, 2))Z"
    }
}

package enum Timestamp {   // the CLI's --now
    /// Unix milliseconds from either an integer string or an RFC 3339 date.
    package static func parse(_ text: String) -> Int64? {
        if let n = Int64(text), n >= 0 { return n }
        return RFC3339.milliseconds(Array(text.utf8))
    }

    package static func format(_ ms: Int64) -> String { RFC3339.format(ms) }
}
