// What a receipt call may be told (options JSON: device_id, ocsp_responses and the host's state).

public struct ReceiptOptions: Sendable {
    /// Raw device identifier bytes: 16 for an iOS identifierForVendor, 6 for a macOS MAC address.
    public var deviceID: [UInt8]?
    /// DER OCSP responses the host fetched for the leaf of an earlier result.
    public var ocspResponses: [[UInt8]] = []
    public var host = EntitlementOptions()

    public init() {}
}
