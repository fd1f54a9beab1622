-- Records the outcome of a delivery's work and takes it off the ready stream, atomically.
-- KEYS: 1 delivery, 2 ready stream, 3 scheduled zset
-- ARGV: 1 prefix, 2 stream entry id ('' if none), 3 group, 4 outcome, 5 attempt JSON ('' if
--       no request was made), 6 request headers JSON, 7 now (ms), 8 now (RFC 3339),
--       9 next due (ms), 10 next due (RFC 3339), 11 retention (ms), 12 failures before
--       deactivation, 13 failing span before deactivation (ms), 14 fields JSON ('' or
--       rendered body / plugin outcomes as a flat array of field, value)
-- Outcomes: succeeded | retry | failed | gone | filtered | cancelled.
-- Returns the delivery's new status, with ':deactivated' appended when the webhook was
-- switched off by this outcome, or 'missing'.
local P, entry, group, outcome = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, ts = tonumber(ARGV[7]), ARGV[8]
if entry ~= '' then
  redis.call('XACK', KEYS[2], group, entry)
  redis.call('XDEL', KEYS[2], entry)
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local f = redis.call('HMGET', KEYS[1], 'status', 'attempts', 'webhook_id', 'org_id', 'event_id', 'id')
local status, attempts, wh, org, evt, dlv = f[1], f[2], f[3], f[4], f[5], f[6]
redis.call('HSET', KEYS[1], 'updated_at', ts, 'lease_until', '')
if ARGV[14] ~= '' then
  redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[14])))
end
if ARGV[5] ~= '' then
  if attempts == nil or attempts == false or attempts == '[]' or attempts == '' then
    attempts = '[' .. ARGV[5] .. ']'
  else
    attempts = string.sub(attempts, 1, -2) .. ',' .. ARGV[5] .. ']'
  end
  redis.call('HSET', KEYS[1], 'attempts', attempts, 'request_headers', ARGV[6])
  redis.call('HINCRBY', KEYS[1], 'attempt_count', 1)
end
local whkey = P .. ':wh:' .. wh
local pending = whkey .. ':pending'
local exists = redis.call('EXISTS', whkey) == 1
local new_status = status
local deactivated = false
local function finish(s)
  redis.call('HSET', KEYS[1], 'status', s, 'next_attempt_at', '')
  redis.call('SREM', pending, dlv)
  new_status = s
end
if outcome == 'succeeded' then
  finish('succeeded')
  if exists and redis.call('HGET', whkey, 'fail_count') ~= '0' then
    redis.call('HSET', whkey, 'fail_count', '0', 'fail_since', '')
  end
elseif outcome == 'filtered' or outcome == 'cancelled' then
  finish(outcome)
else
  if ARGV[5] ~= '' and exists then
    local count = redis.call('HINCRBY', whkey, 'fail_count', 1)
    local since = tonumber(redis.call('HGET', whkey, 'fail_since') or '')
    if not since then
      since = now
      redis.call('HSET', whkey, 'fail_since', tostring(now))
    end
    local reason = nil
    if outcome == 'gone' then
      reason = 'gone'
    elseif count >= tonumber(ARGV[12]) and now - since >= tonumber(ARGV[13]) then
      reason = 'failing'
    end
    if reason then
      if status == 'pending' then finish('failed') end
      deactivated = deactivate(P, wh, ts, reason)
    end
  end
  if new_status ~= 'pending' then
    -- Already final: cancelled, or failed by a deactivation.
  elseif outcome == 'retry' and exists and redis.call('HGET', whkey, 'active') == '1' then
    redis.call('HSET', KEYS[1], 'next_attempt_at', ARGV[10])
    redis.call('ZADD', KEYS[3], ARGV[9], dlv)
  else
    finish('failed')
  end
end
local ttl = tonumber(ARGV[11])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', P .. ':evt:' .. org .. ':' .. evt, ttl)
if deactivated then return new_status .. ':deactivated' end
return new_status
