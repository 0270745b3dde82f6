// The host's side of the Swift snippets in README.md, docs/*.md and the DocC articles: the names
// they use without defining them (a verifier, the clock, the bytes a client sent, your store, your
// logger, your HTTP replies). Tests/docs/run_examples.py type-checks every snippet against the
// built IAPVerify module with this file beside it; nothing here is run.
import IAPVerify

enum Reply {
    case ok, payloadTooLarge, internalServerError
    static func badRequest(_ why: String) -> Reply { .ok }
}
struct Log: Sendable {
    func info(_ line: String) {}
    func error(_ line: String) {}
    func callAsFunction(_ what: String, _ why: String) {}
}
struct User: Sendable {}
struct StoredSubscription: Sendable {
    var notificationUUIDs: [String] = []
    var lastSignedDateMs: Int64? = nil
}
struct Unreadable: Error { init(_ why: String) {} }

let log = Log()
let user = User()
let stored = StoredSubscription()
let verifier = try! Verifier(json: Array(#"{"bundle_id": "com.example.app"}"#.utf8))
let configJSON = #"{"bundle_id": "com.example.app"}"#
let nowMs: Int64 = 1_767_225_600_000
let receiptBytes: [UInt8] = []
let signedTransaction = ""
let signedPayload = ""
let token: [UInt8] = []
let body: [UInt8] = []
let httpStatus = 200
let retryAfterHeader: String? = nil
let delivered: [String] = []
let storedTransactions: [[UInt8]] = []
let storedRenewals: [[UInt8]] = []

func grant(_ user: User, until expiresDateMs: Int64?) {}
func grant(_ entitlement: Entitlement) {}
func deliverOnce<Id, Product, Quantity>(_ transactionID: Id, _ productID: Product, _ quantity: Quantity) {}
func apply<T, R, E>(_ transaction: T, _ renewal: R, effect: E) {}
func keep(_ payload: String) {}
func store<T, R>(_ transactions: T, _ renewals: R) {}
func retry(afterMs: Int64) {}
func secret(_ name: String) -> String { "" }   // the host's secret store
