// What a JWS call may be told (options JSON: ocsp_responses, the notification state the host
// keeps, and the host's state).

public struct JWSOptions: Sendable {
    /// DER OCSP responses the host fetched for the leaf of an earlier result.
    public var ocspResponses: [[UInt8]] = []
    /// Notifications: the `signed_date_ms` the host last applied for this subscription.
    public var lastSignedDateMs: Int64?
    /// Notifications: notification UUIDs the host already handled.
    public var seenNotificationUUIDs: [String] = []
    public var host = HostState()

    public init() {}
}
