// Status codes: whether a call could answer at all. A verdict (see Verdict.swift) is the answer.
// Values mirror the IAPV_* macros of Include/iapverify.h and must never change.

/// Why a call could not produce a result.
public enum StatusCode: Int32, Sendable, CaseIterable {
    case ok = 0
    case invalidArgument = -1
    case config = -2
    case tooLarge = -3
    case noMemory = -4
    case `internal` = -5

    /// The C macro name, as `iapv_status_name` returns it: the one place the names are written
    /// (static storage, so the C boundary hands the pointer out as it is).
    public var cName: StaticString {
        switch self {
        case .ok: return "IAPV_OK"
        case .invalidArgument: return "IAPV_E_INVALID_ARGUMENT"
        case .config: return "IAPV_E_CONFIG"
        case .tooLarge: return "IAPV_E_TOO_LARGE"
        case .noMemory: return "IAPV_E_NO_MEMORY"
        case .internal: return "IAPV_E_INTERNAL"
        }
    }

    public var name: String { cName.description }
}

/// A call that could not answer: the status plus one readable sentence that says what to fix.
public struct IAPVFailure: Error, Sendable, Equatable {
    public let status: StatusCode
    public let message: String

    public init(_ status: StatusCode, _ message: String) {
        self.status = status
        self.message = message
    }

    static func config(_ message: String) -> IAPVFailure { IAPVFailure(.config, message) }
    static func argument(_ message: String) -> IAPVFailure { IAPVFailure(.invalidArgument, message) }
}
