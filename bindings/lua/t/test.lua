-- Tests for resty.iapverify, run by LuaJIT: `luajit t/test.lua REPO_ROOT LIBRARY_PATH`.
local root, library = arg[1], arg[2]
-- IAPVERIFY_LUA_INSTALLED=1 (t/rock.sh): test the module as luarocks installed it, on LUA_PATH.
local installed = os.getenv("IAPVERIFY_LUA_INSTALLED") == "1"
if not installed then package.path = root .. "/bindings/lua/lib/?.lua;" .. package.path end
local module_path = package.searchpath("resty.iapverify", package.path)
local iapverify = require "resty.iapverify"
local cjson = require "cjson"
local ffi = require "ffi"

local passed, failed = 0, 0
local function check(cond, what)
    if cond then passed = passed + 1 else failed = failed + 1; io.stderr:write("FAIL: ", what, "\n") end
end
local function read(path)
    local f = assert(io.open(path, "rb"))
    local data = f:read("*a")
    f:close()
    return data
end
local function normalize(s) return (s:gsub("%s+", " "):gsub("%s*([%(%),;%*])%s*", "%1")) end

assert(iapverify.load(library))
local version = read(root .. "/VERSION"):gsub("%s+$", "")
check(iapverify.version() == version, "library version is VERSION")
check(iapverify._VERSION == version, "resty.iapverify _VERSION is VERSION")
if installed then
    check(module_path and not module_path:find(root .. "/bindings/", 1, true), "installed module under test: " .. tostring(module_path))
end

-- The cdef must match the header, function by function.
local header = read(root .. "/Include/iapverify.h"):gsub("/%*.-%*/", "")
local module = read(root .. "/bindings/lua/lib/resty/iapverify.lua")
local cdef = module:match("ffi%.cdef %[%[(.-)%]%]")
local count = 0
for decl in header:gmatch("[%w_ ]+[%s%*]+iapv_[%w_]+%b();") do
    count = count + 1
    check(normalize(cdef):find(normalize(decl), 1, true) ~= nil, "cdef matches header: " .. normalize(decl))
end
local declared = 0
for _ in cdef:gmatch("[%s%*]iapv_[%w_]+%(") do declared = declared + 1 end
check(count == declared, "the header declares " .. count .. " functions, the cdef " .. declared)

-- The shared expectations, as every binding answers them.
local doc = cjson.decode(read(root .. "/Tests/shared/expectations.json"))
local fixtures = root .. "/" .. doc.fixtures .. "/"
for _, case in ipairs(doc.cases) do
    local v = assert(iapverify.new(case.config))
    local input = read(fixtures .. case.input)
    local options = next(case.options) and case.options or nil
    local res, err
    if case.kind == "receipt" then
        res, err = v:verify_receipt(input, case.now_ms, options)
    else
        res, err = v:interpret_response(input, case.now_ms, options)
    end
    check(res ~= nil, case.name .. ": " .. tostring(err))
    if res then
        check(res.verdict == case.verdict, case.name .. ": verdict " .. res.verdict)
        check(res.valid == (case.verdict == "valid"), case.name .. ": valid")
        local got = {}
        for _, e in ipairs(res.result.entitlements) do
            got[#got + 1] = table.concat({ e.id, tostring(e.active), e.state, tostring(e.transaction_id) }, " ")
        end
        local want = {}
        for _, e in ipairs(case.entitlements) do
            want[#want + 1] = table.concat({ e.id, tostring(e.active), e.state, tostring(e.transaction_id) }, " ")
        end
        check(table.concat(got, "|") == table.concat(want, "|"), case.name .. ": entitlements " .. table.concat(got, "|"))
        local deliver = {}
        for _, d in ipairs(res.result.delivery.to_deliver) do deliver[#deliver + 1] = d.transaction_id end
        check(table.concat(deliver, ",") == table.concat(case.to_deliver, ","), case.name .. ": to_deliver")
        if case.kind == "response" then
            check(res.result.action == case.action and res.result.status == case.status, case.name .. ": action/status")
        end
    end
    v:close()
end

-- Errors come back as nil, "IAPV_E_...: message".
local v, err = iapverify.new({ bundle_id = "a", colour = "red" })
check(v == nil and err:find("^IAPV_E_CONFIG: .*colour") ~= nil, "config error names the key: " .. tostring(err))
v = assert(iapverify.new('{"bundle_id":"*","max_input_bytes":100}'))
local res
res, err = v:verify_receipt(("x"):rep(101), 0)
check(res == nil and err:find("^IAPV_E_TOO_LARGE") ~= nil, "too large")
res, err = v:verify_receipt("x", 0, { colour = 1 })
check(res == nil and err:find("^IAPV_E_INVALID_ARGUMENT") ~= nil, "bad options")
res = assert(v:verify_receipt("garbage", 0))
check(res.verdict == "malformed" and not res.valid, "garbage is malformed")
res = assert(v:compute_entitlements('{"transactions":[]}', 0))
check(res.valid, "entitlements call")
v:close()
res, err = v:verify_receipt("x", 0)
check(res == nil and err:find("closed") ~= nil, "closed verifier")

-- Bad arguments: each is nil and "IAPV_E_INVALID_ARGUMENT: ...", never a Lua error or a crash.
local function refused(what, pattern, fn, ...)
    local ok, res2, err2 = pcall(fn, ...)
    check(ok, what .. ": raised " .. tostring(res2))
    if ok then
        check(res2 == nil and type(err2) == "string" and err2:find("^IAPV_E_INVALID_ARGUMENT: ") ~= nil
              and err2:find(pattern, 1, true) ~= nil, what .. ": " .. tostring(err2))
    end
end
local closed = v
for _, name in ipairs({ "verify_receipt", "interpret_response", "compute_entitlements", "verify_jws" }) do
    refused("closed " .. name, "the verifier is closed", closed[name], closed, "{}", 0)
end
check(closed:close() == true and closed:close() == true, "close twice")

v = assert(iapverify.new({ bundle_id = "*" }))
refused("method called with a dot", "call methods with a colon", v.verify_receipt, "x", 0)
refused("close called with a dot", "call methods with a colon", v.close)
refused("method on another table", "not a verifier", v.verify_receipt, { handle = true }, "x", 0)
local not_strings = { { "nil", nil }, { "number", 12345 }, { "table", { 1, 2 } }, { "boolean", true },
                      { "function", print }, { "cdata", ffi.new("int[1]") } }
for _, case in ipairs(not_strings) do
    refused("receipt " .. case[1], "receipt must be a string, not " .. case[1], v.verify_receipt, v, case[2], 0)
    refused("token " .. case[1], "token must be a string, not " .. case[1], v.verify_jws, v, case[2], 0)
    refused("body " .. case[1], "body must be a string, not " .. case[1], v.interpret_response, v, case[2], 0)
    if case[1] ~= "table" then
        refused("entitlements input " .. case[1], "input must be a table or JSON text, not " .. case[1],
                v.compute_entitlements, v, case[2], 0)
        refused("config " .. case[1], "config must be a table or JSON text, not " .. case[1], iapverify.new, case[2])
    end
    if case[1] ~= "nil" and case[1] ~= "table" then
        refused("options " .. case[1], "options must be a table or JSON text", v.verify_receipt, v, "x", 0, case[2])
    end
end
refused("options that JSON cannot carry", "options cannot be encoded as JSON", v.verify_receipt, v, "x", 0, { f = print })
refused("config that JSON cannot carry", "config cannot be encoded as JSON", iapverify.new, { bundle_id = print })
local bad_now = { { "missing", nil, "now_ms is required" }, { "string", "1745000000000", "must be a number or an int64_t, not string" },
                  { "table", {}, "not table" }, { "boolean", true, "not boolean" }, { "NaN", 0 / 0, "now_ms is NaN" },
                  { "2^63", 2 ^ 63, "signed 64-bit" }, { "2^64", 2 ^ 64, "signed 64-bit" }, { "huge", math.huge, "signed 64-bit" },
                  { "below -2^63", -2 ^ 64, "signed 64-bit" }, { "-huge", -math.huge, "signed 64-bit" },
                  { "uint64 2^63", 0x8000000000000000ULL, "signed 64-bit" }, { "uint64 max", 0xffffffffffffffffULL, "signed 64-bit" },
                  { "int32 cdata", ffi.new("int32_t", 5), "int64_t, not ctype<int>" } }
for _, case in ipairs(bad_now) do
    for _, name in ipairs({ "verify_receipt", "interpret_response", "compute_entitlements", "verify_jws" }) do
        refused("now_ms " .. case[1] .. " in " .. name, case[3], v[name], v, "{}", case[2])
    end
end
-- now_ms inside int64 reaches the library: the largest double below 2^63, int64 cdata, uint64 that
-- fits, and a fraction (rounded down). A negative time is the library's own IAPV_E_INVALID_ARGUMENT.
for _, now in ipairs({ 2 ^ 63 - 1024, 0x7fffffffffffffffLL, 1745000000000ULL, 1745000000000.75 }) do
    res, err = v:verify_receipt("x", now)
    check(res ~= nil and res.verdict == "malformed", "now_ms " .. tostring(now) .. ": " .. tostring(err))
end
for _, now in ipairs({ -1, -0.5, -2 ^ 63, -0x7fffffffffffffffLL - 1 }) do
    res, err = v:verify_receipt("x", now)
    check(res == nil and err:find("^IAPV_E_INVALID_ARGUMENT: now_ms") ~= nil, "negative now_ms " .. tostring(now) .. ": " .. tostring(err))
end
check(iapverify.entitlement(nil, "x") == nil and iapverify.entitlement({}, "x") == nil, "entitlement of nothing")
v:close()

-- StoreKit 2
v = assert(iapverify.new({ bundle_id = "*", environments = { "Sandbox" } }))
local token = read(fixtures .. "jws/transaction_autorenew_sandbox_2022-11.jws"):gsub("%s+$", "")
res = assert(v:verify_jws(token, 1893456000000))
check(res.valid and res.result.kind == "transaction", "verify_jws: " .. res.verdict)
-- The core's whitespace rule: around the token it is not part of it; inside, malformed.
res = assert(v:verify_jws(" " .. token .. "\r\n", 1893456000000))
check(res.valid, "verify_jws with whitespace around: " .. res.verdict)
res = assert(v:verify_jws(token:gsub("%.", ".\n", 1), 1893456000000))
check(res.verdict == "malformed", "verify_jws with whitespace inside: " .. res.verdict)
v:close()

-- App Store Server API: the signer, its requests and tokens, and API answers (Tests/shared/fakeapple).
do
    local fake = root .. "/Tests/shared/fakeapple/"
    local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    local function b64url_decode(text)
        local bits, nbits, out = 0, 0, {}
        for i = 1, #text do
            local index = B64:find(text:sub(i, i), 1, true)
            if not index then return nil end
            bits, nbits = bits * 64 + (index - 1), nbits + 6
            if nbits >= 8 then
                nbits = nbits - 8
                local byte = math.floor(bits / 2 ^ nbits)
                out[#out + 1] = string.char(byte)
                bits = bits - byte * 2 ^ nbits
            end
        end
        return table.concat(out)
    end
    local now = 1700000000123
    local signer_json = read(fake .. "signer.json")
    local signer = assert(iapverify.signer_new(signer_json))
    check(assert(iapverify.signer_new(cjson.decode(signer_json))):close() == true, "signer from a table")

    local req = assert(signer:api_request({ endpoint = "transaction_history", environment = "Sandbox",
                                            transaction_id = "1001", revision = "rev-1" }, now))
    check(req.method == "GET" and req.url == "https://api.storekit-sandbox.apple.com/inApps/v2/history/1001?revision=rev-1",
          "transaction_history request: " .. tostring(req.method) .. " " .. tostring(req.url))
    check(req.body == nil and req.headers.Accept == "application/json" and req.headers["Content-Type"] == nil,
          "transaction_history has no body")
    check(req.environment == "Sandbox" and #req.deprecations == 0, "Apple's spelling: no deprecation")
    local old_req = assert(signer:api_request({ endpoint = "test_notification", environment = "sandbox" }, now))
    check(old_req.environment == "Sandbox" and #old_req.deprecations == 1, "the lower-case environment still works, noted")
    local jwt = (req.headers.Authorization or ""):match("^Bearer (.+)$") or ""
    local h, p, s = jwt:match("^([%w_-]+)%.([%w_-]+)%.([%w_-]+)$")
    check(h ~= nil, "the bearer token has 3 parts: " .. jwt)
    if h then
        local header, claims = cjson.decode(b64url_decode(h)), cjson.decode(b64url_decode(p))
        check(header.alg == "ES256" and header.kid == "FAKEKEY123" and header.typ == "JWT", "token header")
        check(claims.iss == "57246542-96fe-1a63-e053-0824d011072a" and claims.aud == "appstoreconnect-v1"
              and claims.bid == "com.example.fake", "token claims")
        check(claims.iat == 1700000000 and claims.exp > claims.iat and claims.exp <= claims.iat + 3600,
              "token times: iat " .. tostring(claims.iat) .. " exp " .. tostring(claims.exp))
        check(#b64url_decode(s) == 64, "the signature is raw r||s")
        check(req.token_expires_at_ms == claims.exp * 1000, "token_expires_at_ms")
    end
    req = assert(signer:api_request('{"endpoint":"consumption_info","transaction_id":"5","body":'
        .. '{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"DELIVERED"}}', now))
    check(req.method == "PUT" and req.url == "https://api.storekit.apple.com/inApps/v2/transactions/consumption/5"
          and req.headers["Content-Type"] == "application/json" and cjson.decode(req.body).deliveryStatus == "DELIVERED",
          "consumption_info request from JSON text")
    req = assert(signer:api_request({ endpoint = "advanced_commerce_request_refund", transaction_id = "5",
        body = { requestInfo = { requestReferenceId = "7E3FB20B-4CDB-47CC-936D-99D65F608138" }, refundRiskingPreference = false,
                 items = { { SKU = "news", refundReason = "OTHER", refundType = "PRORATED", revoke = false } } } }, now))
    check(req.method == "POST" and req.url == "https://api.storekit.apple.com/advancedCommerce/v1/transaction/requestRefund/5"
          and cjson.decode(req.body).requestInfo.requestReferenceId == "7e3fb20b-4cdb-47cc-936d-99d65f608138",
          "an Advanced Commerce call: " .. tostring(req.url))
    local bad, bad_err = signer:api_request({ endpoint = "advanced_commerce_cancel_subscription", transaction_id = "5",
        body = { requestInfo = { requestReferenceId = "7e3fb20b-4cdb-47cc-936d-99d65f608138" }, storefront = "us" } }, now)
    check(bad == nil and tostring(bad_err):find("storefront", 1, true) ~= nil, "an Advanced Commerce body is checked")
    local tok = assert(signer:token(now))
    check(tok.issued_at_ms == 1700000000000 and tok.expires_at_ms == 1700000300000 and select(2, tok.token:gsub("%.", "")) == 2,
          "token()")

    local bad_calls = { { "a slash", { endpoint = "transaction_info", transaction_id = "a/b" } },
                        { "a question mark", { endpoint = "transaction_info", transaction_id = "a?b" } },
                        { "dot dot", { endpoint = "transaction_info", transaction_id = ".." } },
                        { "no id", { endpoint = "transaction_info" } },
                        { "unknown endpoint", '{"endpoint":"transaction_lottery"}' },
                        { "unknown environment", { endpoint = "transaction_info", transaction_id = "1", environment = "staging" } },
                        { "not JSON", "{endpoint" } }
    for _, case in ipairs(bad_calls) do
        refused("api_request " .. case[1], "", signer.api_request, signer, case[2], now)
    end
    refused("api_request without a call", "call must be a table or JSON text, not nil", signer.api_request, signer, nil, now)
    refused("api_request with a number", "call must be a table or JSON text, not number", signer.api_request, signer, 7, now)
    refused("api_request without now_ms", "now_ms is required", signer.api_request, signer, { endpoint = "test_notification" })
    refused("token with a string now_ms", "must be a number", signer.token, signer, "now")
    refused("token before 1970", "now_ms", signer.token, signer, -1)
    refused("signer method with a dot", "call methods with a colon", signer.token, now)
    refused("signer method on a verifier", "not a signer", signer.api_request, assert(iapverify.new({ bundle_id = "*" })), "{}", now)

    local wrong = cjson.decode(signer_json)
    wrong.private_key_pem = read(fake .. "p384.p8")
    local none, err2 = iapverify.signer_new(wrong)
    check(none == nil and err2:find("^IAPV_E_CONFIG: ") ~= nil and not err2:find("PRIVATE KEY", 1, true),
          "a P-384 key is a config error: " .. tostring(err2))
    none, err2 = iapverify.signer_new('{"key_id":"A"}')
    check(none == nil and err2:find("^IAPV_E_CONFIG: .*private_key_pem") ~= nil, "missing key: " .. tostring(err2))
    refused("signer config nil", "config must be a table or JSON text, not nil", iapverify.signer_new, nil)

    local api = assert(iapverify.new(read(fake .. "verifier.json")))
    res = assert(api:interpret_api_response('{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}',
        { endpoint = "transaction_history", environment = "Sandbox", http_status = 429, retry_after = "1700000007000" },
        1700000000000))
    check(not res.valid and res.result.action == "retry_later" and res.result.retry_after_ms == 7000
          and res.result.error_code == 4290000 and #res.result.transactions == 0, "429: " .. res.json)
    check(res.result.environment == "Sandbox" and #res.result.deprecations == 0, "API answer environment: " .. res.json)
    res = assert(api:interpret_response('{"status":21005}', now, { endpoint = "sandbox" }))
    check(res.result.action == "retry_later" and #res.result.deprecations == 1
          and res.result.deprecations[1]:find("options.endpoint is deprecated", 1, true) ~= nil,
          "the deprecated options.endpoint of /verifyReceipt answers: " .. res.json)
    res = assert(api:interpret_response('{"status":21005}', now, { environment = "Sandbox", attempt = 2 }))
    check(res.result.retry_after_ms == 2000 and #res.result.deprecations == 0, "options.environment: " .. res.json)
    res = assert(api:interpret_response("", now, { environment = "Production", attempt = 2, http_status = 503 }))
    check(res.verdict == "temporarily_unavailable" and res.result.action == "retry_later"
          and res.result.retry_after_ms == 2000, "options.http_status 503: " .. res.json)
    refused("interpret_response with http_status 600", "http_status", api.interpret_response, api, "", now,
            { http_status = 600 })
    local no, why = api:interpret_response('{"status":21005}', now, { device_id = "abc" })
    check(no == nil and why:find('"device_id" does not apply to iapv_interpret_response', 1, true) ~= nil,
          "another entry point's key is refused: " .. tostring(why))
    res = assert(api:interpret_api_response("", '{"endpoint":"transaction_info","http_status":401}', now))
    check(not res.valid and res.verdict == "configuration_error" and res.result.action == "fix_configuration", "401: " .. res.json)
    res = assert(api:interpret_api_response("{}", { endpoint = "transaction_info", http_status = 503, attempt = 3 }, now))
    check(res.result.action == "retry_later" and res.result.retry_after_ms == 4000, "503 backoff: " .. res.json)
    refused("interpret_api_response without options", "options.endpoint", api.interpret_api_response, api, "{}", nil, now)
    refused("interpret_api_response with unknown endpoint", "options.endpoint", api.interpret_api_response, api, "{}",
            { endpoint = "transaction_lottery", http_status = 200 }, now)
    refused("interpret_api_response without now_ms", "now_ms is required", api.interpret_api_response, api, "{}",
            { endpoint = "transaction_info", http_status = 200 })
    refused("interpret_api_response body nil", "body must be a string, not nil", api.interpret_api_response, api, nil,
            { endpoint = "transaction_info", http_status = 200 }, now)
    api:close()
    refused("closed verifier interpret_api_response", "the verifier is closed", api.interpret_api_response, api, "{}",
            { endpoint = "transaction_info", http_status = 401 }, now)

    -- Offer signatures: the result's shape and claims here; the signatures themselves are checked
    -- with openssl when it is installed (Python and Go check them with their own crypto too).
    local nonce = "0F6E6A3C-1C2B-4D7A-9E8F-123456789ABC"
    local sig = assert(signer:sign({ kind = "promotional_offer_v1", nonce = nonce, product_id = "pro.monthly",
                                     offer_identifier = "WINBACK1" }, now))
    check(sig.kind == "promotional_offer_v1" and sig.key_id == "FAKEKEY123" and sig.nonce == nonce:lower()
          and sig.timestamp_ms == now and sig.jws == nil and type(sig.signature) == "string", "sign V1 result")
    local function std_b64_decode(text)
        return b64url_decode((text:gsub("=", ""):gsub("%+", "-"):gsub("/", "_")))
    end
    if os.execute("openssl version >/dev/null 2>&1") == 0 or os.execute("openssl version >/dev/null 2>&1") == true then
        local message = table.concat({ "com.example.fake", "FAKEKEY123", "pro.monthly", "WINBACK1", "", nonce:lower(),
                                       tostring(now) }, "\226\129\163")   -- U+2063 in UTF-8
        local dir = os.tmpname()
        local function write(path, data) local f = assert(io.open(path, "wb")); f:write(data); f:close() end
        write(dir .. ".msg", message)
        write(dir .. ".sig", std_b64_decode(sig.signature))
        local cmd = "openssl dgst -sha256 -verify " .. fake .. "developer.pub.pem -signature " .. dir .. ".sig "
            .. dir .. ".msg >/dev/null 2>&1"
        local rc = os.execute(cmd)
        check(rc == 0 or rc == true, "openssl verifies the V1 signature over the U+2063-joined string")
        write(dir .. ".msg", message .. "0")
        rc = os.execute(cmd)
        check(not (rc == 0 or rc == true), "openssl refuses the V1 signature over another message")
        os.remove(dir .. ".msg"); os.remove(dir .. ".sig"); os.remove(dir)
    end
    sig = assert(signer:sign('{"kind":"introductory_offer_eligibility","nonce":"' .. nonce .. '","product_id":"p",'
        .. '"allow_introductory_offer":true,"transaction_id":"42"}', now))
    check(sig.signature == nil and sig.timestamp_ms == 1700000000000, "sign V2 result")
    local jh, jp = sig.jws:match("^([%w_-]+)%.([%w_-]+)%.[%w_-]+$")
    local jheader, jclaims = cjson.decode(b64url_decode(jh)), cjson.decode(b64url_decode(jp))
    check(jheader.alg == "ES256" and jheader.kid == "FAKEKEY123" and jheader.typ == "JWT", "offer JWS header")
    check(jclaims.aud == "introductory-offer-eligibility" and jclaims.iat == 1700000000 and jclaims.exp == nil
          and jclaims.allowIntroductoryOffer == true and jclaims.transactionId == "42" and jclaims.nonce == nonce:lower()
          and jclaims.bid == "com.example.fake", "offer JWS claims")
    local text = '{"operation":"CREATE_SUBSCRIPTION"}'
    sig = assert(signer:sign({ kind = "advanced_commerce_request", nonce = nonce, request = text }, now))
    jp = sig.jws:match("^[%w_-]+%.([%w_-]+)%.")
    jclaims = cjson.decode(b64url_decode(jp))
    check(jclaims.aud == "advanced-commerce-api" and std_b64_decode(jclaims.request) == text, "advanced commerce request claim")
    local v1 = '"kind":"promotional_offer_v1","product_id":"p","offer_identifier":"o"'
    refused("sign without a nonce", "nonce", signer.sign, signer, "{" .. v1 .. "}", now)
    refused("sign with a bad nonce", "UUID", signer.sign, signer, '{' .. v1 .. ',"nonce":"abc"}', now)
    refused("sign an unknown kind", "unknown", signer.sign, signer, { kind = "coupon", nonce = nonce }, now)
    refused("sign with a field of another kind", "does not apply", signer.sign, signer,
            '{' .. v1 .. ',"nonce":"' .. nonce .. '","transaction_id":"1"}', now)
    refused("sign allow_introductory_offer not boolean", "true or false", signer.sign, signer,
            { kind = "introductory_offer_eligibility", nonce = nonce, product_id = "p", transaction_id = "1",
              allow_introductory_offer = "yes" }, now)
    refused("sign a request that is not JSON", "JSON", signer.sign, signer,
            { kind = "advanced_commerce_request", nonce = nonce, request = "nope" }, now)
    refused("sign without a request", "request must be a table or JSON text", signer.sign, signer, nil, now)
    refused("sign without now_ms", "now_ms is required", signer.sign, signer, "{}")

    check(signer:close() == true and signer:close() == true, "close the signer twice")
    refused("closed signer api_request", "the signer is closed", signer.api_request, signer, { endpoint = "test_notification" }, now)
    refused("closed signer token", "the signer is closed", signer.token, signer, now)
    refused("closed signer sign", "the signer is closed", signer.sign, signer, { kind = "promotional_offer_v1" }, now)
    refused("signer close with a dot", "call methods with a colon", signer.close)
end

-- Revocation: the fake PKI of Tests/shared/fakeapple/ocsp, its answers made for 2026-01-01T01:00:00Z.
do
    local dir = root .. "/Tests/shared/fakeapple/ocsp/"
    local ocsp_now, url = 1767229200000, "http://127.0.0.1:39217/ocsp"
    local token = read(dir .. "transaction.jws"):gsub("%s+$", "")
    local function verifier(policy)
        return assert(iapverify.new({ bundle_id = "com.example.fake", revocation = policy,
            trust = { include_apple_roots = false, roots_pem = { read(dir .. "root.pem") } } }))
    end
    local off, required = verifier("off"), verifier("required")
    local function jws(v, ...)
        local answers = { ... }
        local options = nil
        if #answers > 0 then
            options = { ocsp_responses = {} }
            for i, name in ipairs(answers) do options.ocsp_responses[i] = read(dir .. name .. ".der") end
        end
        local res, err = v:verify_jws(token, ocsp_now, options)
        check(res ~= nil, "ocsp jws: " .. tostring(err))
        return res or { verdict = "?" }, iapverify.revocation(res)
    end

    local res, rev = jws(off)
    check(res.valid and rev and rev.status == "unchecked" and rev.responder_url == url, "ocsp: off, no answer: unchecked with the URL")
    check(rev and type(rev.request_der) == "string" and rev.request_der:byte(1) == 0x30
          and iapverify.base64_encode(rev.request_der) == rev.request, "ocsp: request_der is the request's DER")
    check(rev and rev.this_update_ms == nil and rev.revoked_at_ms == nil, "ocsp: unchecked has no times")

    res, rev = jws(off, "good")
    check(res.verdict == "valid" and rev and rev.status == "good" and rev.next_update_ms == 1767830400000, "ocsp: good (DER) is valid")
    res = assert(required:verify_jws(token, ocsp_now, { ocsp_responses = { iapverify.base64_encode(read(dir .. "good.der")) } }))
    check(res.verdict == "valid", "ocsp: good (base64) under required is valid")
    res = assert(required:verify_jws(token, ocsp_now,
        '{"ocsp_responses":["' .. iapverify.base64_encode(read(dir .. "delegated_good.der")) .. '"]}'))
    check(res.verdict == "valid", "ocsp: a delegated responder's good answer (JSON text options) is valid")

    for _, v in ipairs({ off, required }) do
        res, rev = jws(v, "revoked")
        check(res.verdict == "revoked" and not res.valid and rev and rev.status == "revoked"
              and rev.revoked_at_ms == 1767139200000, "ocsp: revoked is refused")
    end

    res, rev = jws(required)
    check(res.verdict == "revocation_unknown" and not res.valid and rev and rev.status == "unchecked"
          and rev.responder_url == url, "ocsp: required without an answer is revocation_unknown")
    res, rev = jws(off, "forged")
    check(res.verdict == "valid" and rev and rev.status == "unknown", "ocsp: off, forged: unknown, still valid")
    res, rev = jws(required, "forged")
    check(res.verdict == "revocation_unknown" and rev and rev.status == "unknown", "ocsp: required, forged: revocation_unknown")
    res, rev = jws(required, "stale", "good")
    check(res.verdict == "valid" and rev and rev.status == "good", "ocsp: the first usable answer decides")

    res = assert(off:verify_jws("not.a.token", ocsp_now))
    check(res.verdict == "malformed" and iapverify.revocation(res) == nil, "ocsp: no revocation before the chain verified")
    -- Receipts carry the same object under receipt.signing.
    local rv = assert(iapverify.new({ bundle_id = "com.dashedspace.analytics" }))
    res = assert(rv:verify_receipt(read(fixtures .. "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der"),
                                   1745000000000, { ocsp_responses = { read(dir .. "good.der") } }))
    rev = iapverify.revocation(res)
    check(res.valid and rev and rev.status == "unknown" and rev.request_der ~= nil, "ocsp: receipt signing.revocation")

    for _, data in ipairs({ "", "f", "fo", "foo", "foob", "fooba", "foobar", "\0\255\128" }) do
        check(iapverify.base64_decode(iapverify.base64_encode(data)) == data, "base64 round trip " .. #data)
    end
    check(iapverify.base64_encode("foobar") == "Zm9vYmFy" and iapverify.base64_encode("fo") == "Zm8=", "base64 of foobar")
    check(iapverify.base64_decode("Zm8") == nil, "base64 without padding is refused")
end

-- read_body() under a stand-in ngx: the body in memory, in nginx's temp file (a body over
-- client_body_buffer_size, where get_body_data() is nil), none, too large, unreadable.
do
    local der = read(fixtures .. "receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der")
    local b64 = iapverify.base64_encode(der)   -- the README's receipt as an app sends it, 11 KB
    local function request(data, file)
        local was_read = false
        ngx = { req = { read_body = function() was_read = true end,
                        get_body_data = function() return was_read and data or nil end,
                        get_body_file = function() return was_read and file or nil end } }
    end
    local temp = os.tmpname()
    local function spill(data) local f = assert(io.open(temp, "wb")); f:write(data); f:close(); return temp end
    local function body(...)
        local ok, got, status, why = pcall(iapverify.read_body, ...)
        check(ok, "read_body raised " .. tostring(got))
        return got, status, why
    end

    request(b64, nil)
    check(body() == b64, "read_body: a body in memory")
    request(nil, spill(b64))
    check(body() == b64, "read_body: a body in nginx's temp file")
    request(nil, spill(der))
    check(body() == der, "read_body: DER in the temp file")
    local pro = assert(iapverify.new(read(root .. "/docs/examples/pro-config.json")))
    res = assert(pro:verify_receipt(body(), 1595439548000))
    check(res.verdict == "valid", "read_body: the receipt from the temp file verifies: " .. res.verdict)
    pro:close()

    request(nil, nil)
    local got, status, why = body()
    check(got == nil and status == 400 and why:find("no request body") ~= nil, "read_body: no body: " .. tostring(why))
    request(nil, spill(""))
    got, status, why = body()
    check(got == nil and status == 400, "read_body: an empty temp file: " .. tostring(why))
    request(("x"):rep(101), nil)
    got, status, why = body(100)
    check(got == nil and status == 413 and why:find("^IAPV_E_TOO_LARGE: .*101 bytes") ~= nil, "read_body: too large in memory: " .. tostring(why))
    request(nil, spill(("x"):rep(101)))
    got, status, why = body(100)
    check(got == nil and status == 413 and why:find("^IAPV_E_TOO_LARGE: .*101 bytes") ~= nil, "read_body: too large in a file: " .. tostring(why))
    request(nil, spill(("x"):rep(100)))
    check(body(100) == ("x"):rep(100), "read_body: at max_bytes")
    request(nil, temp .. ".gone")
    got, status, why = body()
    check(got == nil and status == 500 and why:find("temp file") ~= nil, "read_body: an unreadable temp file: " .. tostring(why))
    os.remove(temp)
    ngx = nil
    got, status = body()
    check(got == nil and status == 500, "read_body outside nginx")
end

-- A loop to shake out leaks or crashes in the FFI glue.
v = assert(iapverify.new({ bundle_id = "com.dashedspace.analytics" }))
local receipt = read(fixtures .. "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der")
local valid = 0
for _ = 1, 2000 do
    if v:verify_receipt(receipt, 1745000000000).valid then valid = valid + 1 end
end
check(valid == 2000, "2000 verifications")

-- iOS 6 transaction receipts: the id is read, never verified.
do
    local text = read(root .. "/Tests/shared/transaction_receipt_ios6.b64")
    local r = assert(iapverify.read_transaction_receipt(text))
    check(r.verdict == "unverified" and r.transaction_id == "1000000046178818" and r.trusted == false,
          "transaction receipt read: " .. tostring(r.verdict))
    check(r.purchase_info["product-id"] == "com.example.coins", "transaction receipt purchase_info")
    local bad = assert(iapverify.read_transaction_receipt("hello"))
    check(bad.verdict == "malformed", "not a transaction receipt is malformed")
    local none, err = iapverify.read_transaction_receipt(42)
    check(none == nil and err:find("INVALID_ARGUMENT"), "a number is refused")
end

-- Retention Messaging: an image goes as its bytes.
do
    local signer = assert(iapverify.signer_new(read(root .. "/Tests/shared/fakeapple/signer.json")))
    local png = iapverify.base64_decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    local req = assert(signer:api_request({ endpoint = "upload_image", image_identifier = "7e3fb20b-4cdb-47cc-936d-99d65f608138",
                                            body_base64 = iapverify.base64_encode(png) }, 1767225600000))
    check(req.method == "PUT" and req.body == png and req.headers["Content-Type"] == "image/png", "upload_image sends the PNG bytes")
    local del = assert(signer:api_request({ endpoint = "delete_realtime_url" }, 1767225600000))
    check(del.method == "DELETE" and del.body == nil, "delete_realtime_url is a DELETE without a body")
end

print(("lua-test: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
