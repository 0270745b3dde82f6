// The C boundary of libiapverify.so. Thin by design: it checks pointers and lengths, boxes
// handles, maps failures to status codes and hands results to C memory. No logic lives here.
//
// Ownership: a verifier handle is a retained `Verifier`; a result handle is a retained
// `ResultBox` whose strings stay valid until `iapv_result_free`. Nothing here traps: every
// pointer is optional and checked, and failures become statuses.

import CIAPVerifyHeader
import Glibc
import IAPVerify

/// A finished result as malloc'd, NUL-terminated C strings. The JSON is the writer's own block,
/// taken over without a copy (a large receipt's result is hundreds of kilobytes).
final class ResultBox {
    let verdict: UnsafeMutablePointer<CChar>
    let json: UnsafeMutablePointer<CChar>
    let jsonLength: Int
    let isValid: Bool

    init?(verdict: String, json text: JSONText, isValid: Bool) {
        guard let v = ResultBox.copy(verdict) else { return nil }
        guard let j = text.take() else { free(v); return nil }
        self.verdict = v
        self.json = j
        self.jsonLength = text.count
        self.isValid = isValid
    }

    init?(verdict: String, json: [UInt8], isValid: Bool) {
        guard let v = ResultBox.copy(verdict) else { return nil }
        guard let j = ResultBox.copy(json) else { free(v); return nil }
        self.verdict = v
        self.json = j
        self.jsonLength = json.count
        self.isValid = isValid
    }

    deinit {
        free(verdict)
        free(json)
    }

    private static func copy(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        bytes.withUnsafeBytes { copy($0) }
    }

    /// The text's bytes straight from the String, with no intermediate array.
    private static func copy(_ text: String) -> UnsafeMutablePointer<CChar>? {
        var text = text
        return text.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
    }

    private static func copy(_ raw: UnsafeRawBufferPointer) -> UnsafeMutablePointer<CChar>? {
        guard let p = malloc(raw.count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
        if let base = raw.baseAddress { memcpy(p, base, raw.count) }
        p[raw.count] = 0
        return p
    }
}

/// Fills the caller's `iapv_error`, whose layout comes from the public header itself.
private func writeError(_ err: UnsafeMutablePointer<iapv_error>?, _ status: StatusCode, _ message: String) {
    guard let e = err else { return }
    e.pointee.code = status.rawValue
    e.pointee.reserved = 0
    withUnsafeMutableBytes(of: &e.pointee.message) { dst in
        let text = fitted(message, capacity: dst.count - 1)
        var n = 0
        for b in text.utf8 { dst[n] = b; n += 1 }
        dst[n] = 0
    }
}

/// The message as it fits `capacity` bytes: whole, or cut after the last whole word that fits,
/// with " ..." to say so (never mid-word, never mid-character).
func fitted(_ message: String, capacity: Int) -> String {
    guard message.utf8.count > capacity else { return message }
    let marker = " ..."
    var cut = ""
    var word = ""
    for scalar in message.unicodeScalars {
        if scalar == " " {
            if cut.utf8.count + word.utf8.count + marker.utf8.count > capacity { break }
            cut += word
            word = " "
        } else {
            word.unicodeScalars.append(scalar)
        }
    }
    if cut.isEmpty {   // one word longer than the buffer: whole characters of it
        for scalar in message.unicodeScalars where cut.utf8.count + String(scalar).utf8.count + marker.utf8.count <= capacity {
            cut.unicodeScalars.append(scalar)
        }
    }
    return cut + marker
}

private func fail(_ err: UnsafeMutablePointer<iapv_error>?, _ failure: IAPVFailure) -> Int32 {
    writeError(err, failure.status, failure.message)
    return failure.status.rawValue
}

private func buffer(_ p: UnsafeRawPointer?, _ len: Int) -> UnsafeRawBufferPointer? {
    if len == 0 { return UnsafeRawBufferPointer(start: nil, count: 0) }
    guard let p, len > 0 else { return nil }
    return UnsafeRawBufferPointer(start: p, count: len)
}

private func verifier(_ v: OpaquePointer?) -> Verifier? {
    guard let v else { return nil }
    return Unmanaged<Verifier>.fromOpaque(UnsafeRawPointer(v)).takeUnretainedValue()
}

private func box(_ r: OpaquePointer?) -> ResultBox? {
    guard let r else { return nil }
    return Unmanaged<ResultBox>.fromOpaque(UnsafeRawPointer(r)).takeUnretainedValue()
}

// MARK: - Version and status

@_cdecl("iapv_abi_version")
public func iapv_abi_version() -> UInt32 { UInt32(IAPV_ABI_VERSION) }

/// The header's IAPV_VERSION_STRING, copied once into static C storage.
nonisolated(unsafe) private let versionString: UnsafePointer<CChar> = {
    let text = Array(IAPV_VERSION_STRING.utf8CString)
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: text.count)
    p.initialize(from: text, count: text.count)
    return UnsafePointer(p)
}()

@_cdecl("iapv_version_string")
public func iapv_version_string() -> UnsafePointer<CChar> { versionString }

@_cdecl("iapv_error_message_size")
public func iapv_error_message_size() -> Int { MemoryLayout.size(ofValue: iapv_error().message) }

private let unknownStatus: StaticString = "IAPV_E_UNKNOWN"

@_cdecl("iapv_status_name")
public func iapv_status_name(_ s: Int32) -> UnsafePointer<CChar> {
    let name = StatusCode(rawValue: s)?.cName ?? unknownStatus   // the names live in StatusCode only
    return UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}

// MARK: - Verifier

/// The shared shape of the two constructors: check the arguments, build from JSON, retain.
private func newHandle<T: AnyObject>(_ config: UnsafePointer<CChar>?, _ len: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                     _ err: UnsafeMutablePointer<iapv_error>?,
                                     _ make: (UnsafeRawBufferPointer) throws(IAPVFailure) -> T) -> Int32 {
    guard let out else { return fail(err, IAPVFailure(.invalidArgument, "out must not be NULL")) }
    out.pointee = nil
    guard let json = buffer(config, len), len > 0 else {
        return fail(err, IAPVFailure(.invalidArgument, "config_json must not be NULL or empty"))
    }
    do {
        let handle = try make(json)
        out.pointee = OpaquePointer(Unmanaged.passRetained(handle).toOpaque())
        return 0
    } catch {
        return fail(err, error)
    }
}

@_cdecl("iapv_verifier_new")
public func iapv_verifier_new(_ config: UnsafePointer<CChar>?, _ len: Int,
                              _ out: UnsafeMutablePointer<OpaquePointer?>?,
                              _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    newHandle(config, len, out, err) { (json) throws(IAPVFailure) in try Verifier(json: json) }
}

@_cdecl("iapv_verifier_free")
public func iapv_verifier_free(_ v: OpaquePointer?) {
    guard let v else { return }
    Unmanaged<Verifier>.fromOpaque(UnsafeRawPointer(v)).release()
}

// MARK: - Calls

/// The last step of every call that makes a result: hand the box to C, or say why there is none.
private func deliver(_ out: UnsafeMutablePointer<OpaquePointer?>, _ err: UnsafeMutablePointer<iapv_error>?,
                     _ result: ResultBox?) -> Int32 {
    guard let result else { return fail(err, IAPVFailure(.noMemory, "out of memory copying the result")) }
    out.pointee = OpaquePointer(Unmanaged.passRetained(result).toOpaque())
    return 0
}

/// The one shape of every verifying call: check arguments, parse options, run, deliver the result.
private func verifyingCall<R: RenderedResult, Options: EntryOptions>(
    _ v: OpaquePointer?, _ input: UnsafePointer<UInt8>?, _ len: Int, _ what: String,
    _ options: UnsafePointer<CChar>?, _ optionsLen: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?, _ err: UnsafeMutablePointer<iapv_error>?,
    _ run: (Verifier, UnsafeRawBufferPointer, Options) throws(IAPVFailure) -> R) -> Int32 {
    guard let out else { return fail(err, IAPVFailure(.invalidArgument, "out must not be NULL")) }
    out.pointee = nil
    guard let verifier = verifier(v) else { return fail(err, IAPVFailure(.invalidArgument, "verifier must not be NULL")) }
    guard let bytes = buffer(input, len) else {
        return fail(err, IAPVFailure(.invalidArgument, "\(what) is NULL but its length is not 0"))
    }
    guard let optionBytes = buffer(options, optionsLen) else {
        return fail(err, IAPVFailure(.invalidArgument, "options_json is NULL but options_len is not 0"))
    }
    do {
        let opts: Options = try verifier.options(json: optionBytes)
        let report = try run(verifier, bytes, opts)
        let text = report.resultJSONBlock()
        // The writer stops writing when malloc or realloc fails, so a process short of memory
        // gets a status here instead of an abort.
        guard text.isComplete else { return fail(err, IAPVFailure(.noMemory, "out of memory writing the result JSON")) }
        return deliver(out, err, ResultBox(verdict: report.verdict.rawValue, json: text, isValid: report.isValid))
    } catch {
        return fail(err, error)
    }
}

@_cdecl("iapv_verify_receipt")
public func iapv_verify_receipt(_ v: OpaquePointer?, _ receipt: UnsafePointer<UInt8>?, _ len: Int,
                                _ options: UnsafePointer<CChar>?, _ optionsLen: Int, _ nowMs: Int64,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    verifyingCall(v, receipt, len, "receipt", options, optionsLen, out, err) { (verifier, bytes, opts: ReceiptOptions) throws(IAPVFailure) in
        try verifier.verifyReceipt(bytes, options: opts, nowMs: nowMs)
    }
}

@_cdecl("iapv_interpret_response")
public func iapv_interpret_response(_ v: OpaquePointer?, _ body: UnsafePointer<UInt8>?, _ len: Int,
                                    _ options: UnsafePointer<CChar>?, _ optionsLen: Int, _ nowMs: Int64,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                    _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    verifyingCall(v, body, len, "body", options, optionsLen, out, err) { (verifier, bytes, opts: ResponseOptions) throws(IAPVFailure) in
        try verifier.interpretResponse(bytes, options: opts, nowMs: nowMs)
    }
}

@_cdecl("iapv_compute_entitlements")
public func iapv_compute_entitlements(_ v: OpaquePointer?, _ input: UnsafePointer<UInt8>?, _ len: Int,
                                      _ options: UnsafePointer<CChar>?, _ optionsLen: Int, _ nowMs: Int64,
                                      _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                      _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    verifyingCall(v, input, len, "input_json", options, optionsLen, out, err) { (verifier, bytes, opts: EntitlementOptions) throws(IAPVFailure) in
        try verifier.computeEntitlements(bytes, options: opts, nowMs: nowMs)
    }
}

@_cdecl("iapv_verify_jws")
public func iapv_verify_jws(_ v: OpaquePointer?, _ jws: UnsafePointer<UInt8>?, _ len: Int,
                            _ options: UnsafePointer<CChar>?, _ optionsLen: Int, _ nowMs: Int64,
                            _ out: UnsafeMutablePointer<OpaquePointer?>?,
                            _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    verifyingCall(v, jws, len, "jws", options, optionsLen, out, err) { (verifier, bytes, opts: JWSOptions) throws(IAPVFailure) in
        try verifier.verifyJWS(bytes, options: opts, nowMs: nowMs)
    }
}

@_cdecl("iapv_interpret_api_response")
public func iapv_interpret_api_response(_ v: OpaquePointer?, _ body: UnsafePointer<UInt8>?, _ len: Int,
                                        _ options: UnsafePointer<CChar>?, _ optionsLen: Int, _ nowMs: Int64,
                                        _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                        _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    verifyingCall(v, body, len, "body", options, optionsLen, out, err) { (verifier, bytes, opts: APIResponseOptions) throws(IAPVFailure) in
        try verifier.interpretAPIResponse(bytes, options: opts, nowMs: nowMs)
    }
}

// MARK: - Signer (App Store Server API)

private func signer(_ s: OpaquePointer?) -> Signer? {
    guard let s else { return nil }
    return Unmanaged<Signer>.fromOpaque(UnsafeRawPointer(s)).takeUnretainedValue()
}

/// The shape of the calls whose results grant nothing (the signer's, an iOS 6 transaction
/// receipt read): make the JSON, deliver it with is_valid 0. The caller has checked `out`.
private func grantingNothingCall(_ out: UnsafeMutablePointer<OpaquePointer?>, _ err: UnsafeMutablePointer<iapv_error>?,
                                 verdict: String, _ make: () throws(IAPVFailure) -> [UInt8]) -> Int32 {
    do {
        return deliver(out, err, ResultBox(verdict: verdict, json: try make(), isValid: false))
    } catch {
        return fail(err, error)
    }
}

@_cdecl("iapv_read_transaction_receipt")
public func iapv_read_transaction_receipt(_ receipt: UnsafePointer<UInt8>?, _ len: Int,
                                          _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                          _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    guard let out else { return fail(err, IAPVFailure(.invalidArgument, "out must not be NULL")) }
    out.pointee = nil
    guard let bytes = buffer(receipt, len) else { return fail(err, IAPVFailure(.invalidArgument, "receipt must not be NULL")) }
    let report = TransactionReceiptReader.read(bytes)
    return grantingNothingCall(out, err, verdict: report.verdictName) { () throws(IAPVFailure) in report.resultJSON() }
}

@_cdecl("iapv_signer_new")
public func iapv_signer_new(_ config: UnsafePointer<CChar>?, _ len: Int,
                            _ out: UnsafeMutablePointer<OpaquePointer?>?,
                            _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    newHandle(config, len, out, err) { (json) throws(IAPVFailure) in try Signer(json: json) }
}

@_cdecl("iapv_signer_free")
public func iapv_signer_free(_ s: OpaquePointer?) {
    guard let s else { return }
    Unmanaged<Signer>.fromOpaque(UnsafeRawPointer(s)).release()
}

@_cdecl("iapv_api_token")
public func iapv_api_token(_ s: OpaquePointer?, _ nowMs: Int64, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                           _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    guard let out else { return fail(err, IAPVFailure(.invalidArgument, "out must not be NULL")) }
    out.pointee = nil
    guard let signer = signer(s) else { return fail(err, IAPVFailure(.invalidArgument, "signer must not be NULL")) }
    return grantingNothingCall(out, err, verdict: "token") { () throws(IAPVFailure) in try signer.apiToken(nowMs: nowMs).resultJSON() }
}

@_cdecl("iapv_api_request")
public func iapv_api_request(_ s: OpaquePointer?, _ call: UnsafePointer<CChar>?, _ len: Int, _ nowMs: Int64,
                             _ out: UnsafeMutablePointer<OpaquePointer?>?,
                             _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    guard let out else { return fail(err, IAPVFailure(.invalidArgument, "out must not be NULL")) }
    out.pointee = nil
    guard let signer = signer(s) else { return fail(err, IAPVFailure(.invalidArgument, "signer must not be NULL")) }
    guard let bytes = buffer(call, len), len > 0 else {
        return fail(err, IAPVFailure(.invalidArgument, "call_json must not be NULL or empty"))
    }
    return grantingNothingCall(out, err, verdict: "request") { () throws(IAPVFailure) in try signer.apiRequest(bytes, nowMs: nowMs).resultJSON() }
}

@_cdecl("iapv_sign")
public func iapv_sign(_ s: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ len: Int, _ nowMs: Int64,
                      _ out: UnsafeMutablePointer<OpaquePointer?>?,
                      _ err: UnsafeMutablePointer<iapv_error>?) -> Int32 {
    guard let out else { return fail(err, IAPVFailure(.invalidArgument, "out must not be NULL")) }
    out.pointee = nil
    guard let signer = signer(s) else { return fail(err, IAPVFailure(.invalidArgument, "signer must not be NULL")) }
    guard let bytes = buffer(request, len), len > 0 else {
        return fail(err, IAPVFailure(.invalidArgument, "request_json must not be NULL or empty"))
    }
    return grantingNothingCall(out, err, verdict: "signature") { () throws(IAPVFailure) in try signer.sign(bytes, nowMs: nowMs).resultJSON() }
}

// MARK: - Results

@_cdecl("iapv_result_verdict")
public func iapv_result_verdict(_ r: OpaquePointer?) -> UnsafePointer<CChar>? {
    box(r).map { UnsafePointer($0.verdict) }
}

@_cdecl("iapv_result_is_valid")
public func iapv_result_is_valid(_ r: OpaquePointer?) -> Int32 {
    box(r)?.isValid == true ? 1 : 0
}

@_cdecl("iapv_result_json")
public func iapv_result_json(_ r: OpaquePointer?, _ lenOut: UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>? {
    guard let result = box(r) else {
        lenOut?.pointee = 0
        return nil
    }
    lenOut?.pointee = result.jsonLength
    return UnsafePointer(result.json)
}

@_cdecl("iapv_result_free")
public func iapv_result_free(_ r: OpaquePointer?) {
    guard let r else { return }
    Unmanaged<ResultBox>.fromOpaque(UnsafeRawPointer(r)).release()
}
