-- Queues one more attempt of deliveries by hand (the API's retry, and the bulk retry of a
-- webhook's failed deliveries), within one partition. The caller has checked that each
-- belongs to the organisation and that its webhook is active.
-- Row fields used here: 'v' manual extra attempts of a waiting delivery (they take no
-- place in the retry schedule), 'm' the due time such an extra attempt kept.
-- An ended delivery of an ordered webhook (its row has `z`) goes behind its subject's
-- pending deliveries: queued when its subject has none, else held after them (`order.lua`);
-- a held one is pending already ('merged').
-- KEYS: 1 ready, then per delivery: 1 its row, 2 its webhook's queue, 3 its event, 4 its
--       webhook's heads, 5 its held deliveries
-- ARGV: 1 now (ms), 2 retention (ms), 3 'any' (also succeeded and pending ones) or 'failed'
--       (failed ones only), then per delivery: 1 queue member, 2 webhook id
-- Returns per delivery: 'queued' (this call queued an attempt), 'merged' (an attempt of it
-- was already queued or in flight: this call joins it, nothing more is sent), or why not:
-- 'missing', 'skipped' (not failed, in bulk), 'filtered' (nothing to send), 'cancelled'
-- (its webhook was deleted).
local ready, now, retention, mode = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local replies = {}
for i = 2, #KEYS, 5 do
  local dkey, queue, ekey, heads, held = KEYS[i], KEYS[i + 1], KEYS[i + 2], KEYS[i + 3], KEYS[i + 4]
  local a = 4 + (i - 2) / 5 * 2
  local member, wh = ARGV[a], ARGV[a + 1]
  local f = redis.call('HMGET', dkey, 'o', 's', 'n', 'q', 'v', 'm', 'z')
  local extra = tonumber(f[5] or '0') or 0
  local status = f[2]
  local reply = 'queued'
  if not f[1] then
    reply = 'missing'
  elseif mode == 'failed' and status ~= 'failed' then
    reply = 'skipped'
  elseif status == 'filtered' or status == 'cancelled' then
    reply = status
  elseif not status then
    -- Pending and waiting for a retry still ahead: one extra attempt now. The retry it was
    -- waiting for keeps its time ('m') and its place in the schedule ('v' counts extra
    -- attempts, which use no place). One due, in flight or already brought forward goes on
    -- as it is: this call is merged with it.
    local score = redis.call('ZSCORE', queue, member)
    local due = tonumber(f[4] or '')
    if score and due and tonumber(score) == due and due > tonumber(now) and (f[6] or '') == '' then
      redis.call('ZADD', queue, now, member)
      redis.call('ZADD', ready, 'LT', now, wh)
      redis.call('HSET', dkey, 'q', now, 'm', f[4], 'v', tostring(extra + 1))
    else
      reply = 'merged'
    end
  else
    redis.call('HDEL', dkey, 's')
    -- 'k' is the last place in the schedule allowed: this attempt's.
    local attempts = tonumber(f[3] or '0') or 0
    redis.call('HSET', dkey, 'k', tostring(attempts + 1 - extra), 'q', now, 'u', now, 'm', '')
    -- (A row the trim found pending past its day has a TTL: this one is pending again.)
    redis.call('PERSIST', dkey)
    local dlv = string.sub(member, 1, string.find(member, ' ', 1, true) - 1)
    if not f[7] or order_admit(heads, held, f[7], dlv, member) then
      redis.call('ZADD', queue, now, member)
      redis.call('ZADD', ready, 'LT', now, wh)
    end
    -- The event must outlive the new attempt (unless it keeps no TTL: it is a snapshot).
    if redis.call('PTTL', ekey) > 0 then redis.call('PEXPIRE', ekey, retention) end
  end
  replies[#replies + 1] = reply
end
return replies
