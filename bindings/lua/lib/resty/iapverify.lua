-- resty.iapverify: LuaJIT FFI bindings for libiapverify, in the lua-resty style.
--
-- Load the library once per worker (init_by_lua* or init_worker_by_lua*), build a verifier
-- once, and call it from handlers. Calls never yield and take microseconds (a receipt with a
-- cached chain is about 0.1 ms), so they are fine inside a request handler.
--
--   local iapverify = require "resty.iapverify"
--   iapverify.load()                                   -- or iapverify.load("/path/libiapverify.so.1")
--   local v = assert(iapverify.new({ bundle_id = "com.example.app" }))
--   local res, err = v:verify_receipt(body, ngx.now() * 1000)
--   if not res then ngx.log(ngx.ERR, err) elseif res.valid then ... end
--
-- Every call returns `res, err`. `err` ("IAPV_E_CONFIG: unknown key ...") means the call could
-- not answer; a rejected receipt is a `res` with `valid == false` and its `verdict`.
local ffi = require "ffi"

local ok_cjson, cjson = pcall(require, "cjson.safe")

local _M = { _VERSION = "0.1.0", ABI_VERSION = 1 }
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
iapv_status iapv_verifier_new(const char *config_json, size_t config_len, iapv_verifier **out, iapv_error *err);
void iapv_verifier_free(iapv_verifier *v);
iapv_status iapv_verify_receipt(const iapv_verifier *v, const uint8_t *receipt, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_interpret_response(const iapv_verifier *v, const uint8_t *body, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_compute_entitlements(const iapv_verifier *v, const uint8_t *input_json, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
iapv_status iapv_verify_jws(const iapv_verifier *v, const uint8_t *jws, size_t len, const char *options_json, size_t options_len, int64_t now_ms, iapv_result **out, iapv_error *err);
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
    lib = loaded
    return lib
end

function _M.version()
    if not lib then return nil, "call load() first" end
    return ffi.string(lib.iapv_version_string())
end

local function encode(value)
    if value == nil then return nil end
    if type(value) == "string" then return value end
    if not ok_cjson then return nil, "pass JSON text: cjson is not available to encode tables" end
    return cjson.encode(value)
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
    local json, err = encode(config)
    if not json then return nil, err or "config is required" end
    local out = ffi.new("iapv_verifier *[1]")
    local e = ffi.new("iapv_error")
    local status = lib.iapv_verifier_new(json, #json, out, e)
    if status ~= 0 then return failure(status, e) end
    return setmetatable({ handle = ffi.gc(out[0], lib.iapv_verifier_free) }, mt)
end

local function call(self, fn, input, now_ms, options)
    if not self.handle then return nil, "IAPV_E_INVALID_ARGUMENT: the verifier is closed" end
    if type(input) ~= "string" then return nil, "IAPV_E_INVALID_ARGUMENT: input must be a string" end
    local opts, err = encode(options)
    if options ~= nil and not opts then return nil, err end
    local out = ffi.new("iapv_result *[1]")
    local e = ffi.new("iapv_error")
    local status = fn(self.handle, input, #input, opts, opts and #opts or 0, now_ms or 0, out, e)
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
    return call(self, lib.iapv_verify_receipt, receipt, now_ms, options)
end

--- Interprets a /verifyReceipt body; options may carry endpoint and attempt.
function methods:interpret_response(body, now_ms, options)
    return call(self, lib.iapv_interpret_response, body, now_ms, options)
end

--- Entitlements from {"transactions": [...], "renewal_info": [...]} (JSON text or a table; Debian's
-- cjson encodes an empty table as {}, so pass JSON text when a list may be empty).
function methods:compute_entitlements(input, now_ms, options)
    local json, err = encode(input)
    if not json then return nil, err end
    return call(self, lib.iapv_compute_entitlements, json, now_ms, options)
end

--- Verifies a StoreKit 2 compact JWS (transaction, renewal info or server notification).
function methods:verify_jws(token, now_ms, options)
    return call(self, lib.iapv_verify_jws, token, now_ms, options)
end

--- Frees the verifier now instead of at garbage collection.
function methods:close()
    if self.handle then
        lib.iapv_verifier_free(ffi.gc(self.handle, nil))
        self.handle = nil
    end
end

--- The entitlement `id` from a decoded result, or nil.
function _M.entitlement(res, id)
    for _, e in ipairs(res.result and res.result.entitlements or {}) do
        if e.id == id then return e end
    end
end

return _M
