-- Records the outcomes of deliveries' work and acknowledges their stream entries, many
-- deliveries per call (group commit), each as if recorded alone, in order.
-- (Acknowledged entries are trimmed from the stream in bulk, not one by one.)
-- KEYS: 1 ready stream, 2 scheduled zset, then one delivery per outcome
-- ARGV: 1 prefix, 2 group, 3 now (ms), 4 now (RFC 3339), 5 retention (ms), 6 failures
--       before deactivation, 7 failing span before deactivation (ms), then 8 per delivery:
--       stream entry id ('' if none), outcome, attempt JSON ('' if no request was made),
--       the request's signature, next due (ms), next due (RFC 3339), extra fields as a
--       JSON array of field, value ('' for none), '1' if the webhook had no failure streak
-- Outcomes: succeeded | retry | failed | gone | filtered | cancelled.
-- Returns one reply per delivery: its new status, with ':deactivated' appended when the
-- webhook was switched off by this outcome; 'missing'; or 'error:' and a message (that
-- delivery's entry is then not acknowledged, so it will be attempted again).
local P, group = ARGV[1], ARGV[2]
local now, ts, retention = tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local max_failures, failing_span = tonumber(ARGV[6]), tonumber(ARGV[7])
local STRIDE, FIRST = 8, 8

local function record(key, outcome, attempt, signature, due_ms, due_ts, fields, healthy)
  local f = redis.call('HMGET', key, 'status', 'attempts', 'webhook_id', 'org_id', 'event_id', 'id')
  if not f[1] then return 'missing' end
  local status, attempts, wh, org, evt, dlv = f[1], f[2], f[3], f[4], f[5], f[6]
  local sets = {'updated_at', ts, 'lease_until', ''}
  if fields ~= '' then
    for _, v in ipairs(cjson.decode(fields)) do sets[#sets + 1] = v end
  end
  if attempt ~= '' then
    if not attempts or attempts == '[]' or attempts == '' then
      attempts = '[' .. attempt .. ']'
    else
      attempts = string.sub(attempts, 1, -2) .. ',' .. attempt .. ']'
    end
    -- (attempt_count was counted by load.lua when the attempt started.)
    for _, v in ipairs({'attempts', attempts, 'signature', signature}) do
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
    if healthy ~= '1' and redis.call('EXISTS', whkey) == 1 and redis.call('HGET', whkey, 'fail_count') ~= '0' then
      redis.call('HSET', whkey, 'fail_count', '0', 'fail_since', '')
    end
  elseif outcome == 'filtered' or outcome == 'cancelled' then
    new_status, final = outcome, true
  else
    local exists = redis.call('EXISTS', whkey) == 1
    local reason = nil
    if attempt ~= '' and exists then
      local count = redis.call('HINCRBY', whkey, 'fail_count', 1)
      local since = tonumber(redis.call('HGET', whkey, 'fail_since') or '')
      if not since then
        since = now
        redis.call('HSET', whkey, 'fail_since', tostring(now))
      end
      if outcome == 'gone' then
        reason = 'gone'
      elseif count >= max_failures and now - since >= failing_span then
        reason = 'failing'
      end
    end
    if status ~= 'pending' then
      -- Already final: cancelled, or failed by a deactivation.
    elseif reason == nil and outcome == 'retry' and exists and redis.call('HGET', whkey, 'active') == '1' then
      sets[#sets + 1] = 'next_attempt_at'
      sets[#sets + 1] = due_ts
      redis.call('ZADD', KEYS[2], due_ms, dlv)
      -- The event must outlive its pending deliveries (unless it never expires: it is the
      -- newest snapshot of its record).
      local ekey = P .. ':evt:' .. org .. ':' .. evt
      if redis.call('PTTL', ekey) > 0 then redis.call('PEXPIRE', ekey, retention) end
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
      redis.call('HSET', key, unpack(sets))
      sets = nil
      deactivated = deactivate(P, wh, ts, reason)
    end
  end
  if sets then
    if final then
      for _, v in ipairs({'status', new_status, 'next_attempt_at', ''}) do sets[#sets + 1] = v end
      redis.call('SREM', pending, dlv)
    end
    redis.call('HSET', key, unpack(sets))
  end
  redis.call('PEXPIRE', key, retention)
  if deactivated then return new_status .. ':deactivated' end
  return new_status
end

local replies, acks = {}, {}
for i = 3, #KEYS do
  local a = FIRST + (i - 3) * STRIDE
  local ok, reply = pcall(record, KEYS[i], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5],
    ARGV[a + 6], ARGV[a + 7])
  if ok then
    if ARGV[a] ~= '' then acks[#acks + 1] = ARGV[a] end
    replies[#replies + 1] = reply
  else
    replies[#replies + 1] = 'error:' .. (type(reply) == 'table' and reply.err or tostring(reply))
  end
end
if #acks > 0 then redis.call('XACK', KEYS[1], group, unpack(acks)) end
return replies
