// An order the host waits to see paid (options `orders`): the delivery plan matches purchases to these.

public struct PendingOrder: Sendable, Equatable {
    public var orderID: String
    public var productID: String
    public var createdMs: Int64

    public init(orderID: String, productID: String, createdMs: Int64) {
        self.orderID = orderID
        self.productID = productID
        self.createdMs = createdMs
    }
}
