-- The gateway's request handler: verify the receipt the app sent, check one entitlement, answer.
-- The time comes from ngx.now(); the library never reads a clock.
local iapverify = require "resty.iapverify"
local cjson = require "cjson.safe"

local _M = {}
local verifier, entitlement

--- Reads the gateway config ({"entitlement": "...", "verifier": {library config}}) and builds
--- the verifier. Called from init_by_lua; an error here stops nginx from starting.
function _M.init(config_path, library_path)
    local f = assert(io.open(config_path, "rb"), "cannot read " .. config_path)
    local config = assert(cjson.decode(f:read("*a")), "invalid JSON in " .. config_path)
    f:close()
    assert(iapverify.load(library_path))
    entitlement = assert(config.entitlement, "the gateway config needs an \"entitlement\"")
    verifier = assert(iapverify.new(cjson.encode(config.verifier)))
end

local function reply(status, body)
    ngx.status = status
    ngx.say(cjson.encode(body))
    return ngx.exit(status)
end

-- The receipt from the X-Receipt header, else from the body (in memory or in nginx's temp file);
-- or nil, an HTTP status and why the request is bad.
local function receipt_from_request()
    local header = ngx.req.get_headers()["X-Receipt"]
    if type(header) == "table" then   -- the header came more than once: which one is meant?
        return nil, 400, "send one X-Receipt header, not " .. #header
    end
    if header and header ~= "" then return header end
    local body, status, why = iapverify.read_body()
    if status == 400 then return nil, 400, "no receipt in the body or the X-Receipt header" end
    return body, status, why
end

function _M.handle()
    if ngx.req.get_method() ~= "POST" then
        return reply(405, { error = "POST the receipt to /verify" })
    end
    local receipt, status, bad = receipt_from_request()
    if status == 400 then
        return reply(400, { verdict = "malformed", reason = bad })
    end
    if not receipt then
        ngx.log(ngx.ERR, "iapverify: ", bad)
        if status == 413 then return reply(413, { error = bad }) end
        return reply(500, { error = "cannot read the request body" })
    end
    local res, err = verifier:verify_receipt(receipt, ngx.now() * 1000)
    if not res then
        ngx.log(ngx.ERR, "iapverify: ", err)
        if err:find("^IAPV_E_TOO_LARGE") then return reply(413, { error = err }) end
        return reply(500, { error = "receipt verification failed" })
    end
    local result = res.result
    if res.verdict == "malformed" then
        return reply(400, { verdict = res.verdict, reason = result.reason })
    end
    if not res.valid then
        return reply(403, { verdict = res.verdict, reason = result.reason })
    end
    local e = iapverify.entitlement(res, entitlement)
    if e and e.active then
        return reply(200, { verdict = "valid", entitlement = e })
    end
    return reply(402, { verdict = "valid", entitlement = e or { id = entitlement, active = false, state = "not_purchased" } })
end

return _M
