// The HTTP routes. Each handler verifies what it can without the store (a forged or foreign token
// never reaches it), then hands the verified report to the store, which decides and records.

import Foundation
import Hummingbird
import IAPVerify

struct TransactionRequest: Decodable {
    var userID: String
    var signedTransaction: String
    enum CodingKeys: String, CodingKey { case userID = "user_id", signedTransaction = "signed_transaction" }
}

struct NotificationRequest: Decodable {
    var signedPayload: String
}

struct Routes: Sendable {
    let verifier: Verifier
    let store: PurchaseStore
    let clock: Clock

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("transactions") { request, _ in respond(await self.transaction(request)) }
        router.post("apple/notifications") { request, _ in respond(await self.notification(request)) }
        router.get("users/:id/entitlements") { _, context in
            guard let user = context.parameters.get("id"), isUserID(user) else {
                return respond(.error(422, "user id: 1-64 letters, digits, '-' or '_'"))
            }
            return respond(await self.store.entitlements(of: user, nowMs: self.clock.nowMs()))
        }
        return router
    }

    /// POST /transactions: 200 accepted (with what was delivered now), 400 not valid (the
    /// verdict), 409 another user's purchase.
    func transaction(_ request: Request) async -> Answer {
        let body: TransactionRequest
        switch await decode(TransactionRequest.self, request, limit: 64 * 1024) {
        case .success(let b): body = b
        case .failure(let refused): return refused.answer
        }
        guard isUserID(body.userID) else { return .error(422, "user_id: 1-64 letters, digits, '-' or '_'") }
        let now = clock.nowMs()
        var options = JWSOptions()
        options.kind = .transaction               // a notification or a renewal info here is malformed
        let report: JWSReport
        do {
            report = try verifier.verifyJWS(Array(body.signedTransaction.utf8), options: options, nowMs: now)
        } catch {
            return .failed(error)
        }
        guard report.isValid else {
            log("transaction_refused", ["user_id": body.userID, "verdict": report.verdict.rawValue, "reason": report.judgement.reason])
            return Answer(400, Refusal(verdict: report.verdict.rawValue, reason: report.judgement.reason))
        }
        // The normalised transaction, as the library writes it: what the store keeps, and what
        // computeEntitlements reads back.
        guard let json = ResultJSON.object(in: report.resultJSON(), at: ["transaction"]) else {
            return .error(500, "internal error")
        }
        let answer = await store.claim(report, transactionJSON: json, by: body.userID, nowMs: now)
        log("transaction", ["user_id": body.userID, "transaction_id": report.transaction?.transactionID ?? "",
                            "http_status": String(answer.status)])
        return answer
    }

    /// POST /apple/notifications: 200 applied, duplicate, stale or kept as data; 400 forged,
    /// foreign or not a notification; 409 its appAccountToken names another user than the owner.
    func notification(_ request: Request) async -> Answer {
        let body: NotificationRequest
        switch await decode(NotificationRequest.self, request, limit: 256 * 1024) {
        case .success(let b): body = b
        case .failure(let refused): return refused.answer
        }
        let payload = Array(body.signedPayload.utf8)
        let now = clock.nowMs()
        var options = JWSOptions()
        options.kind = .notification
        let probe: JWSReport
        do {
            probe = try verifier.verifyJWS(payload, options: options, nowMs: now)
        } catch {
            return .failed(error)
        }
        guard probe.isValid else {
            log("notification_refused", ["verdict": probe.verdict.rawValue, "reason": probe.judgement.reason])
            return Answer(400, Refusal(verdict: probe.verdict.rawValue, reason: probe.judgement.reason))
        }
        let answer = await store.apply(notification: payload, probe: probe, nowMs: now)
        log("notification", ["type": probe.notification?.type ?? "", "uuid": probe.notification?.uuid ?? "",
                             "http_status": String(answer.status)])
        return answer
    }
}

/// 1-64 letters, digits, '-' or '_' (a UUID, what the app sets as appAccountToken, fits). A real
/// service takes the user from the request's credential, never from the body.
func isUserID(_ s: String) -> Bool {
    (1...64).contains(s.utf8.count) && s.utf8.allSatisfy { c in
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95
    }
}

struct RefusedRequest: Error {
    var answer: Answer
}

/// The whole body, at most `limit` bytes, decoded as `T`; or the answer that refuses it
/// (413 too large, 400 not JSON, 422 the wrong shape).
func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int) async -> Result<T, RefusedRequest> {
    let body: ByteBuffer
    do {
        body = try await request.body.collect(upTo: limit)
    } catch {
        return .failure(RefusedRequest(answer: .error(413, "the body is larger than \(limit) bytes")))
    }
    let bytes = Data(body.readableBytesView)
    guard (try? JSONSerialization.jsonObject(with: bytes)) != nil else {
        return .failure(RefusedRequest(answer: .error(400, "the body is not valid JSON")))
    }
    do {
        return .success(try JSONDecoder().decode(T.self, from: bytes))
    } catch {
        return .failure(RefusedRequest(answer: .error(422, "invalid request")))
    }
}

func respond(_ answer: Answer) -> Response {
    Response(status: .init(code: answer.status), headers: [.contentType: "application/json"],
             body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
}
