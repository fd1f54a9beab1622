-- Records the outcome of a delivery's work and acknowledges its stream entry, atomically.
-- (Acknowledged entries are trimmed from the stream in bulk, not one by one.)
-- KEYS: 1 delivery, 2 ready stream, 3 scheduled zset
-- ARGV: 1 prefix, 2 stream entry id ('' if none), 3 group, 4 outcome, 5 attempt JSON ('' if
--       no request was made), 6 the request's signature, 7 now (ms), 8 now (RFC 3339),
--       9 next due (ms), 10 next due (RFC 3339), 11 retention (ms), 12 failures before
--       deactivation, 13 failing span before deactivation (ms), 14 extra fields as a JSON
--       array of field, value ('' for none), 15 '1' if the webhook had no failure streak
-- Outcomes: succeeded | retry | failed | gone | filtered | cancelled.
-- Returns the delivery's new status, with ':deactivated' appended when the webhook was
-- switched off by this outcome, or 'missing'.
local P, entry, group, outcome = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, ts = tonumber(ARGV[7]), ARGV[8]
if entry ~= '' then redis.call('XACK', KEYS[2], group, entry) end
local f = redis.call('HMGET', KEYS[1], 'status', 'attempts', 'webhook_id', 'org_id', 'event_id', 'id', 'attempt_count')
if not f[1] then return 'missing' end
local status, attempts, wh, org, evt, dlv = f[1], f[2], f[3], f[4], f[5], f[6]
local sets = {'updated_at', ts, 'lease_until', ''}
if ARGV[14] ~= '' then
  for _, v in ipairs(cjson.decode(ARGV[14])) do sets[#sets + 1] = v end
end
if ARGV[5] ~= '' then
  if not attempts or attempts == '[]' or attempts == '' then
    attempts = '[' .. ARGV[5] .. ']'
  else
    attempts = string.sub(attempts, 1, -2) .. ',' .. ARGV[5] .. ']'
  end
  local n = (tonumber(f[7] or '') or 0) + 1
  for _, v in ipairs({'attempts', attempts, 'signature', ARGV[6], 'attempt_count', tostring(n)}) do
    sets[#sets + 1] = v
  end
end
local whkey = P .. ':wh:' .. wh
local pending = whkey .. ':pending'
local new_status = status
local deactivated = false
local final = false
if outcome == 'succeeded' then
  new_status, final = 'succeeded', true
  if ARGV[15] ~= '1' and redis.call('EXISTS', whkey) == 1 and redis.call('HGET', whkey, 'fail_count') ~= '0' then
    redis.call('HSET', whkey, 'fail_count', '0', 'fail_since', '')
  end
elseif outcome == 'filtered' or outcome == 'cancelled' then
  new_status, final = outcome, true
else
  local exists = redis.call('EXISTS', whkey) == 1
  local reason = nil
  if ARGV[5] ~= '' and exists then
    local count = redis.call('HINCRBY', whkey, 'fail_count', 1)
    local since = tonumber(redis.call('HGET', whkey, 'fail_since') or '')
    if not since then
      since = now
      redis.call('HSET', whkey, 'fail_since', tostring(now))
    end
    if outcome == 'gone' then
      reason = 'gone'
    elseif count >= tonumber(ARGV[12]) and now - since >= tonumber(ARGV[13]) then
      reason = 'failing'
    end
  end
  if status ~= 'pending' then
    -- Already final: cancelled, or failed by a deactivation.
  elseif reason == nil and outcome == 'retry' and exists and redis.call('HGET', whkey, 'active') == '1' then
    sets[#sets + 1] = 'next_attempt_at'
    sets[#sets + 1] = ARGV[10]
    redis.call('ZADD', KEYS[3], ARGV[9], dlv)
    -- The event must outlive its pending deliveries (unless it never expires: it is the
    -- newest snapshot of its record).
    local ekey = P .. ':evt:' .. org .. ':' .. evt
    if redis.call('PTTL', ekey) > 0 then redis.call('PEXPIRE', ekey, tonumber(ARGV[11])) end
  else
    new_status, final = 'failed', true
  end
  if reason then
    -- Record this delivery first, then fail the webhook's other pending ones with it.
    if final then
      for _, v in ipairs({'status', new_status, 'next_attempt_at', ''}) do sets[#sets + 1] = v end
      final = false
      redis.call('SREM', pending, dlv)
    end
    redis.call('HSET', KEYS[1], unpack(sets))
    sets = nil
    deactivated = deactivate(P, wh, ts, reason)
  end
end
if sets then
  if final then
    for _, v in ipairs({'status', new_status, 'next_attempt_at', ''}) do sets[#sets + 1] = v end
    redis.call('SREM', pending, dlv)
  end
  redis.call('HSET', KEYS[1], unpack(sets))
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[11]))
if deactivated then return new_status .. ':deactivated' end
return new_status
