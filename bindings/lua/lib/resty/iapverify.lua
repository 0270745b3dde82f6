-- resty.iapverify: LuaJIT FFI bindings for libiapverify, in the lua-resty style.
--
-- Load the library once per worker (init_by_lua* or init_worker_by_lua*), build a verifier
-- once, and call it from handlers. Calls never yield and take microseconds (a receipt with a
-- cached chain is about 0.1 ms), so they are fine inside a request handler.
--
--   local iapverify = require "resty.iapverify"
--   iapverify.load()                                   -- or iapverify.load("/path/libiapverify.so.1")
--   local v = assert(iapverify.new({ bundle_id = "com.example.app" }))
--   local body, status, why = iapverify.read_body()    -- from memory or nginx's temp file
--   if not body then ngx.status = status; ngx.say(why); return ngx.exit(status) end
--   local res, err = v:verify_receipt(body, ngx.now() * 1000)
--   if not res then ngx.log(ngx.ERR, err) elseif res.valid then ... end
--
-- Every call returns `res, err`. `err` ("IAPV_E_CONFIG: unknown key ...") means the call could
-- not answer; a rejected receipt is a `res` with `valid == false` and its `verdict`. Bad arguments
-- (a closed verifier, a receipt that is not a string, a `now_ms` that is missing, not a number or
-- outside int64, options that are not a table or JSON text) are an `err` too, never a Lua error.
local ffi = require "ffi"

local ok_cjson, cjson = pcall(require, "cjson.safe")

local _M = { _VERSION = "0.2.0", ABI_VERSION = 1 }
local mt = { __index = {} }
local methods = mt.__index

-- The declarations of Include/iapverify.h without preprocessor lines (t/test.lua checks that
-- every function here matches the header).
ffi.cdef [[
typedef int32_t iapv_status;
typedef struct iapv_error { int32_t code; uint32_t reserved; char message[248]; } iapv_error;
typedef struct iapv_verifier iapv_verifier;
typedef struct iapv_result iapv_result;
uint32_t iapv_abi_version(void);
const char *iapv_version_string(void);
const char *iapv_status_name(iapv_status s);
size_t iapv_error_message_size(void);
iapv_status iapv_verifier_new(const char *config_json, size_t config_len, iapv_verifier **out, iapv_error *err);
void iapv_verifier_free(iapv_verifier *v);
iapv_status iapv_verify_receipt(const iapv_verifier *v, const uint8_t *receipt, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_interpret_response(const iapv_verifier *v, const uint8_t *body, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_compute_entitlements(const iapv_verifier *v, const uint8_t *input_json, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_verify_jws(const iapv_verifier *v, const uint8_t *jws, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_read_transaction_receipt(const uint8_t *receipt, size_t len, iapv_result **out, iapv_error *err);
typedef struct iapv_signer iapv_signer;
iapv_status iapv_signer_new(const char *config_json, size_t config_len, iapv_signer **out, iapv_error *err);
void iapv_signer_free(iapv_signer *s);
iapv_status iapv_api_token(const iapv_signer *s, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_api_request(const iapv_signer *s, const char *call_json, size_t len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_sign(const iapv_signer *s, const char *request_json, size_t len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_interpret_api_response(const iapv_verifier *v, const uint8_t *body, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
const char *iapv_result_verdict(const iapv_result *r);
int iapv_result_is_valid(const iapv_result *r);
const char *iapv_result_json(const iapv_result *r, size_t *len_out);
void iapv_result_free(iapv_result *r);
]]

local lib

--- Loads the library: `path`, else the first libiapverify.so on package.cpath, else the system's.
function _M.load(path)
    if lib then return lib end
    path = path or package.searchpath("libiapverify", package.cpath)
    local ok, loaded = pcall(ffi.load, path or "libiapverify.so.1")
    if not ok then
        return nil, "cannot load libiapverify: " .. tostring(loaded) ..
            " (pass its path to load(), or put it on package.cpath)"
    end
    local abi = tonumber(loaded.iapv_abi_version())
    if abi ~= _M.ABI_VERSION then
        return nil, "libiapverify ABI " .. abi .. " does not match resty.iapverify (ABI " .. _M.ABI_VERSION .. ")"
    end
    -- The cdef's iapv_error must be the library's (IAPV_ERROR_MESSAGE_SIZE of the header).
    local size = tonumber(loaded.iapv_error_message_size())
    local expected = ffi.sizeof(ffi.new("iapv_error").message)
    if size ~= expected then
        return nil, "libiapverify's iapv_error message holds " .. size .. " bytes, resty.iapverify expects " .. expected
    end
    lib = loaded
    return lib
end

function _M.version()
    if not lib then return nil, "call load() first" end
    return ffi.string(lib.iapv_version_string())
end

local INVALID = "IAPV_E_INVALID_ARGUMENT: "

-- JSON text for the library: a string as it is, a table encoded; or nil and why not.
local function encode(value, what)
    local t = type(value)
    if t == "string" then return value end
    if t ~= "table" then
        return nil, INVALID .. what .. " must be a table or JSON text, not " .. (value == nil and "nil" or t)
    end
    if not ok_cjson then return nil, INVALID .. "pass " .. what .. " as JSON text: cjson is not available to encode tables" end
    local json, err = cjson.encode(value)
    if not json then return nil, INVALID .. what .. " cannot be encoded as JSON: " .. tostring(err) end
    return json
end

-- ---- Base64, for OCSP requests and answers (plain LuaJIT has no ngx.encode_base64) -------------
local bit = require "bit"
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local B64_VALUE = {}
for i = 1, 64 do B64_VALUE[B64:byte(i)] = i - 1 end

--- Standard base64 (with padding) of a byte string.
function _M.base64_encode(data)
    local out, n = {}, #data
    for i = 1, n, 3 do
        local a, b, c = data:byte(i, i + 2)
        local v = bit.bor(bit.lshift(a, 16), bit.lshift(b or 0, 8), c or 0)
        out[#out + 1] = string.char(
            B64:byte(bit.rshift(v, 18) + 1), B64:byte(bit.band(bit.rshift(v, 12), 63) + 1),
            b and B64:byte(bit.band(bit.rshift(v, 6), 63) + 1) or 61, c and B64:byte(bit.band(v, 63) + 1) or 61)
    end
    return table.concat(out)
end

--- The bytes of standard base64 text, or nil and why not.
function _M.base64_decode(text)
    if type(text) ~= "string" or #text % 4 ~= 0 or not text:match("^[%w%+/]*=?=?$") then
        return nil, "not base64 text"
    end
    local out = {}
    for i = 1, #text, 4 do
        local a, b, c, d = B64_VALUE[text:byte(i)], B64_VALUE[text:byte(i + 1)], B64_VALUE[text:byte(i + 2)], B64_VALUE[text:byte(i + 3)]
        local v = bit.bor(bit.lshift(a, 18), bit.lshift(b, 12), bit.lshift(c or 0, 6), d or 0)
        out[#out + 1] = string.char(bit.rshift(v, 16)) ..
            (c and string.char(bit.band(bit.rshift(v, 8), 255)) or "") .. (d and string.char(bit.band(v, 255)) or "")
    end
    return table.concat(out)
end

-- An options table whose ocsp_responses hold DER (any byte outside the base64 alphabet: an
-- OCSPResponse always has one, its third byte) gets a copy with those items in base64.
local function ocsp_options(options)
    if type(options) ~= "table" or type(options.ocsp_responses) ~= "table" then return options end
    local list, changed = {}, false
    for i, item in ipairs(options.ocsp_responses) do
        if type(item) == "string" and item:find("[^%w%+/=]") then
            list[i], changed = _M.base64_encode(item), true
        else
            list[i] = item
        end
    end
    if not changed then return options end
    local copy = {}
    for k, v in pairs(options) do copy[k] = v end
    copy.ocsp_responses = list
    return copy
end

local int64_t, uint64_t = ffi.typeof("int64_t"), ffi.typeof("uint64_t")
local TWO_63 = 2 ^ 63   -- exact as a double; int64_t holds [-2^63, 2^63)

-- now_ms as something the FFI converts to int64_t without wrapping; or nil and why not. A Lua
-- number is rounded down (ngx.now() * 1000 has a fraction), so -0.5 stays negative; negative
-- values go to the library, which refuses them like every binding does.
local function int64(value, what)
    local t = type(value)
    if t == "number" then
        if value ~= value then return nil, INVALID .. what .. " is NaN" end
        if value >= TWO_63 or value < -TWO_63 then
            return nil, INVALID .. what .. " must fit in a signed 64-bit integer, got " .. tostring(value)
        end
        return math.floor(value)
    end
    if t == "cdata" then
        if ffi.istype(int64_t, value) then return value end
        if ffi.istype(uint64_t, value) then
            if value > 0x7fffffffffffffffULL then
                return nil, INVALID .. what .. " must fit in a signed 64-bit integer, got " .. tostring(value)
            end
            return ffi.cast(int64_t, value)
        end
    end
    if value == nil then
        return nil, INVALID .. what .. " is required (Unix milliseconds, e.g. ngx.now() * 1000)"
    end
    return nil, INVALID .. what .. " must be a number or an int64_t, not " .. (t == "cdata" and tostring(ffi.typeof(value)) or t)
end

local function failure(status, err)
    return nil, ffi.string(lib.iapv_status_name(status)) .. ": " .. ffi.string(err.message)
end

--- Builds a verifier from a config (JSON text or a table). Returns verifier, or nil and an error.
function _M.new(config)
    if not lib then
        local _, err = _M.load()
        if not lib then return nil, err end
    end
    local json, err = encode(config, "config")
    if not json then return nil, err end
    local out = ffi.new("iapv_verifier *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_verifier_new(json, #json, out, e)
    if status ~= 0 then return failure(status, e) end
    return setmetatable({ handle = ffi.gc(out[0], lib.iapv_verifier_free) }, mt)
end

-- The verifier's handle, or nil and why there is none (closed, or a method called with a dot).
local function handle_of(self)
    if getmetatable(self) ~= mt then
        return nil, INVALID .. "not a verifier: call methods with a colon, v:verify_receipt(...)"
    end
    if not self.handle then return nil, INVALID .. "the verifier is closed" end
    return self.handle
end

local function call(self, fn, what, input, now_ms, options)
    local handle, err = handle_of(self)
    if not handle then return nil, err end
    if type(input) ~= "string" then
        return nil, INVALID .. what .. " must be a string, not " .. type(input)
    end
    local now
    now, err = int64(now_ms, "now_ms")
    if not now then return nil, err end
    local opts
    if options ~= nil then
        opts, err = encode(ocsp_options(options), "options")
        if not opts then return nil, err end
    end
    local out = ffi.new("iapv_result *[1]")
    local e = ffi.new("iapv_error")
    local status = fn(handle, input, #input, opts, opts and #opts or 0, now, out, e)
    if status ~= 0 then return failure(status, e) end
    local r = out[0]
    local len = ffi.new("size_t[1]")
    local text = ffi.string(lib.iapv_result_json(r, len), len[0])
    local res = { verdict = ffi.string(lib.iapv_result_verdict(r)), valid = lib.iapv_result_is_valid(r) == 1, json = text }
    lib.iapv_result_free(r)
    if ok_cjson then res.result = cjson.decode(text) end
    return res
end

--- Verifies a receipt (DER or base64 string). `now_ms` is the caller's clock, e.g. ngx.now() * 1000.
function methods:verify_receipt(receipt, now_ms, options)
    return call(self, lib.iapv_verify_receipt, "receipt", receipt, now_ms, options)
end

--- Interprets a /verifyReceipt body (JSON text); options may carry environment (the host that
--- answered: "Production" or "Sandbox") and attempt. res.result.deprecations lists the old
--- spellings the options used (endpoint, lower-case "production"), each with what to write instead.
--- Each call reads only its own options keys (docs/options.md); another call's key is an error.
function methods:interpret_response(body, now_ms, options)
    return call(self, lib.iapv_interpret_response, "body", body, now_ms, options)
end

--- Entitlements from {"transactions": [...], "renewal_info": [...]} (JSON text or a table; Debian's
-- cjson encodes an empty table as {}, so pass JSON text when a list may be empty).
function methods:compute_entitlements(input, now_ms, options)
    local json, err = encode(input, "input")
    if not json then return nil, err end
    return call(self, lib.iapv_compute_entitlements, "input", json, now_ms, options)
end

--- Verifies a StoreKit 2 compact JWS (transaction, renewal info or server notification).
function methods:verify_jws(token, now_ms, options)
    return call(self, lib.iapv_verify_jws, "token", token, now_ms, options)
end

--- Interprets an App Store Server API answer. `options` (a table or JSON text) is required and
--- says which call it answers and how it came: { endpoint = "transaction_history",
--- environment = "Sandbox", http_status = 429, retry_after = <the Retry-After header>,
--- attempt = 1 }. res.result.action says what to do next (accept, next_page, retry_later...).
--- Unlike the other calls, options come before now_ms, because they cannot be left out.
function methods:interpret_api_response(body, options, now_ms)
    return call(self, lib.iapv_interpret_api_response, "body", body, now_ms, options)
end

--- Frees the verifier now instead of at garbage collection. Later calls return nil and
--- "IAPV_E_INVALID_ARGUMENT: the verifier is closed"; closing again is fine. Calls never yield,
--- so no call of this Lua state can be running while close() runs.
function methods:close()
    if getmetatable(self) ~= mt then
        return nil, INVALID .. "not a verifier: call methods with a colon, v:close()"
    end
    if self.handle then
        lib.iapv_verifier_free(ffi.gc(self.handle, nil))
        self.handle = nil
    end
    return true
end

-- ---- App Store Server API: the signer ----------------------------------------------------------
--
--   local signer = assert(iapverify.signer_new(p8_config_json))   -- once per worker
--   local req, err = signer:api_request({ endpoint = "transaction_history", environment = "Sandbox",
--                                         transaction_id = tid }, ngx.now() * 1000)
--   -- send req.method to req.url with req.headers and req.body (nil: no body), e.g. with
--   -- lua-resty-http, then:
--   local res = v:interpret_api_response(answer_body, { endpoint = "transaction_history",
--       environment = req.environment, http_status = status, retry_after = headers["Retry-After"] },
--       ngx.now() * 1000)
--
-- The signer methods decode the library's JSON, so they need cjson (OpenResty has it).

local signer_mt = { __index = {} }
local signer_methods = signer_mt.__index

--- Builds a signer from {"private_key_pem", "key_id", "issuer_id", "bundle_id"} (JSON text or a
--- table). Returns signer, or nil and an error (IAPV_E_CONFIG for a missing or wrong key).
function _M.signer_new(config)
    if not lib then
        local _, err = _M.load()
        if not lib then return nil, err end
    end
    if not ok_cjson then return nil, "IAPV_E_INTERNAL: the signer needs cjson to read the library's results" end
    local json, err = encode(config, "config")
    if not json then return nil, err end
    local out = ffi.new("iapv_signer *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_signer_new(json, #json, out, e)
    if status ~= 0 then return failure(status, e) end
    return setmetatable({ handle = ffi.gc(out[0], lib.iapv_signer_free) }, signer_mt)
end

local function signer_handle(self, method)
    if getmetatable(self) ~= signer_mt then
        return nil, INVALID .. "not a signer: call methods with a colon, signer:" .. method .. "(...)"
    end
    if not self.handle then return nil, INVALID .. "the signer is closed" end
    return self.handle
end

-- The decoded JSON of a result, then frees it.
local function take(r)
    local len = ffi.new("size_t[1]")
    local text = ffi.string(lib.iapv_result_json(r, len), len[0])
    lib.iapv_result_free(r)
    local doc = cjson.decode(text)
    if type(doc) ~= "table" then return nil, "IAPV_E_INTERNAL: unreadable result JSON" end
    return doc
end

--- A bearer token issued at now_ms: { token = "<JWT>", issued_at_ms = ..., expires_at_ms = ... },
--- or nil and an error. api_request already puts a fresh token in each request.
function signer_methods:token(now_ms)
    local handle, err = signer_handle(self, "token")
    if not handle then return nil, err end
    local now
    now, err = int64(now_ms, "now_ms")
    if not now then return nil, err end
    local out = ffi.new("iapv_result *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_api_token(handle, now, out, e)
    if status ~= 0 then return failure(status, e) end
    return take(out[0])
end

--- The HTTP request for one API call (a table or JSON text, e.g. { endpoint = "transaction_info",
--- transaction_id = "..." }): { method, url, headers = { name = value }, body = text or nil,
--- endpoint, environment ("Production" or "Sandbox"), token_expires_at_ms, deprecations }, or nil and an error (IAPV_E_INVALID_ARGUMENT for
--- an unknown endpoint or a bad id). Send it as it is.
function signer_methods:api_request(call_desc, now_ms)
    local handle, err = signer_handle(self, "api_request")
    if not handle then return nil, err end
    local json
    json, err = encode(call_desc, "call")
    if not json then return nil, err end
    local now
    now, err = int64(now_ms, "now_ms")
    if not now then return nil, err end
    local out = ffi.new("iapv_result *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_api_request(handle, json, #json, now, out, e)
    if status ~= 0 then return failure(status, e) end
    local req
    req, err = take(out[0])
    if not req then return nil, err end
    if req.body == cjson.null then req.body = nil end
    -- A body that is not JSON (upload_image's PNG) comes base64: the bytes to send.
    if type(req.body_base64) == "string" then req.body = _M.base64_decode(req.body_base64) end
    if req.body_base64 == cjson.null then req.body_base64 = nil end
    return req
end

--- Reads the transaction id out of an iOS 6 style transaction receipt (the base64 property list
--- SKPaymentTransaction.transactionReceipt gave) WITHOUT verifying it: { verdict = "unverified"
--- (or "malformed"), reason, trusted = false, transaction_id, environment, purchase_info }, or nil
--- and an error. Look the id up with the App Store Server API before granting anything.
function _M.read_transaction_receipt(receipt)
    if not lib then
        local _, err = _M.load()
        if not lib then return nil, err end
    end
    if type(receipt) ~= "string" then return nil, INVALID .. "receipt must be a string" end
    local out = ffi.new("iapv_result *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_read_transaction_receipt(receipt, #receipt, out, e)
    if status ~= 0 then return failure(status, e) end
    return take(out[0])
end

--- Signs what an app asks its server for (a table or JSON text): { kind = "promotional_offer_v1"
--- | "promotional_offer_v2" | "introductory_offer_eligibility" | "advanced_commerce_request",
--- nonce = "<a UUID made for this request>", ...the kind's fields }, at now_ms (the V1 timestamp,
--- the V2 iat). Returns { kind, key_id, nonce, timestamp_ms, signature = base64 DER (V1) or nil,
--- jws = compact JWS (V2) or nil }, or nil and an error (IAPV_E_INVALID_ARGUMENT names the field).
function signer_methods:sign(request, now_ms)
    local handle, err = signer_handle(self, "sign")
    if not handle then return nil, err end
    local json
    json, err = encode(request, "request")
    if not json then return nil, err end
    local now
    now, err = int64(now_ms, "now_ms")
    if not now then return nil, err end
    local out = ffi.new("iapv_result *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_sign(handle, json, #json, now, out, e)
    if status ~= 0 then return failure(status, e) end
    local sig
    sig, err = take(out[0])
    if not sig then return nil, err end
    if sig.signature == cjson.null then sig.signature = nil end
    if sig.jws == cjson.null then sig.jws = nil end
    return sig
end

--- Frees the signer now instead of at garbage collection; closing again is fine.
function signer_methods:close()
    if getmetatable(self) ~= signer_mt then
        return nil, INVALID .. "not a signer: call methods with a colon, signer:close()"
    end
    if self.handle then
        lib.iapv_signer_free(ffi.gc(self.handle, nil))
        self.handle = nil
    end
    return true
end

--- The signing certificate's OCSP facts from a decoded result (a JWS result's `revocation`, a
--- receipt result's `receipt.signing.revocation`), or nil before the chain verified: { status =
--- "unchecked" | "good" | "revoked" | "unknown", reason, responder_url, request (base64),
--- request_der (its bytes: POST them to responder_url with Content-Type application/ocsp-request),
--- this_update_ms, next_update_ms, revoked_at_ms }. Pass the answer's bytes back in
--- options.ocsp_responses; keep it until next_update_ms. See docs/revocation.md.
function _M.revocation(res)
    local doc = type(res) == "table" and res.result
    if type(doc) ~= "table" then return nil end
    local rev = doc.revocation
    if rev == nil and type(doc.receipt) == "table" and type(doc.receipt.signing) == "table" then
        rev = doc.receipt.signing.revocation
    end
    if type(rev) ~= "table" then return nil end
    local out = {}
    for k, v in pairs(rev) do
        if not (ok_cjson and v == cjson.null) then out[k] = v end
    end
    if type(out.request) == "string" then out.request_der = _M.base64_decode(out.request) end
    return out
end

local DEFAULT_MAX_INPUT_BYTES = 3145728   -- the library's default max_input_bytes (3 MiB)

--- The request body, inside nginx (content_by_lua*, access_by_lua*): read from memory, or from
--- the temp file nginx writes a body to when it is over client_body_buffer_size (8k by default,
--- less than a base64 receipt). Returns the body, or nil, an HTTP status and why: 400 when there
--- is no body, 413 when it is over `max_bytes` (default 3 MiB, the library's default
--- max_input_bytes; pass yours if the config changes it), 500 when the temp file cannot be read.
--- A body over client_max_body_size never gets here: nginx answers 413 itself.
function _M.read_body(max_bytes)
    max_bytes = max_bytes or DEFAULT_MAX_INPUT_BYTES
    if type(ngx) ~= "table" or type(ngx.req) ~= "table" then
        return nil, 500, "read_body() runs inside nginx (lua-nginx-module or OpenResty)"
    end
    local function too_large(size)
        return nil, 413, "IAPV_E_TOO_LARGE: the request body is " .. size .. " bytes, over max_input_bytes ("
            .. max_bytes .. ")"
    end
    ngx.req.read_body()
    local body = ngx.req.get_body_data()
    if body then
        if #body > max_bytes then return too_large(#body) end
        return body
    end
    local path = ngx.req.get_body_file()
    if not path then
        return nil, 400, "no request body: POST the receipt (DER or base64)"
    end
    local f, err = io.open(path, "rb")
    if not f then return nil, 500, "cannot read the request body's temp file: " .. tostring(err) end
    local size = f:seek("end")
    if size and size > max_bytes then
        f:close()
        return too_large(size)
    end
    f:seek("set")
    body = f:read("*a")
    f:close()
    if not body then return nil, 500, "cannot read the request body's temp file " .. path end
    if body == "" then return nil, 400, "no request body: POST the receipt (DER or base64)" end
    return body
end

--- The entitlement `id` from a decoded result, or nil.
function _M.entitlement(res, id)
    local list = type(res) == "table" and type(res.result) == "table" and res.result.entitlements
    if type(list) ~= "table" then return nil end
    for _, e in ipairs(list) do
        if e.id == id then return e end
    end
end

return _M
