-- Replays logged events of one partition to one webhook (`POST /webhooks/{id}/replay`): an
-- event with no delivery to the webhook gets one; a delivery that ended 'failed' or
-- 'cancelled' gets one more attempt, through the webhook's current plugins; pending,
-- succeeded and filtered ones are left as they are. Run again on the same events (a replay
-- taken over after a crash), it queues nothing twice.
-- KEYS: 1 ready (the partition's webhooks with work), 2 day indexes whose first entries
--       will move to history (zset, `store::queue::index`), then per event: 1 the event, 2 its
--       delivery to the webhook, 3 the organisation's index of the event's day, 4 the
--       webhook's index of that day, 5 the webhook's list of new deliveries, 6 the webhook's
--       queue, 7 its heads, 8 its held deliveries (`order.lua`)
-- ARGV: 1 now (ms), 2 retention (ms), 3 organisation, 4 webhook, 5 '1' when history is kept
--       in PostgreSQL (each day index written to is noted in KEYS[2]), then per event: 1 the
--       delivery id, 2 the event's id, 3 its action, 4 its subject (`Type:id`) when the
--       webhook keeps each subject's order, else ''
-- An ordered webhook's replayed delivery is queued only when its subject has no pending
-- one, else held behind them (`order.lua`): a replay never overtakes live deliveries.
-- Returns per event: 'queued' (a new delivery, or one more attempt of an ended one),
-- 'kept' (a delivery that is pending, succeeded or filtered), 'gone' (the event expired).
local ready, indexes, now, retention, org, wh = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local history = ARGV[5] == '1'
local replies = {}
local pushes = batches()
local queued_any = false
for i = 3, #KEYS, 8 do
  local ekey, dkey, od, wd, new, queue = KEYS[i], KEYS[i + 1], KEYS[i + 2], KEYS[i + 3], KEYS[i + 4], KEYS[i + 5]
  local heads, held = KEYS[i + 6], KEYS[i + 7]
  local a = 6 + (i - 3) / 8 * 4
  local dlv, evt, action, subject = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local reply = 'kept'
  if redis.call('EXISTS', ekey) == 0 then
    reply = 'gone'
  else
    local f = redis.call('HMGET', dkey, 'o', 's', 'n', 'v', 'z')
    local member = dlv .. ' ' .. org .. ' ' .. evt
    if not f[1] then
      -- A new delivery: the fields publish.lua writes (a plain row, or with `z` ordered).
      if subject ~= '' then
        redis.call('HSET', dkey, 'o', org, 'w', wh, 'e', evt, 'a', action, 'z', subject)
      else
        redis.call('HSET', dkey, 'o', org, 'w', wh, 'e', evt, 'a', action)
      end
      local entry = string.sub(dlv, 5)
      pushes.add(od, entry)
      pushes.add(wd, entry)
      if history then
        redis.call('ZADD', indexes, 'NX', now, od)
        redis.call('ZADD', indexes, 'NX', now, wd)
      end
      if subject == '' or order_admit(heads, held, subject, dlv, member) then pushes.add(new, member) end
      reply = 'queued'
    elseif f[2] == 'failed' or f[2] == 'cancelled' then
      -- One more attempt (as a manual retry: 'k' is its place in the schedule), with the
      -- plugins run again: what they produced before ('b', 'h', 'p') goes.
      local attempts = tonumber(f[3] or '0') or 0
      local extra = tonumber(f[4] or '0') or 0
      redis.call('HDEL', dkey, 's', 'b', 'h', 'p')
      redis.call('HSET', dkey, 'k', tostring(attempts + 1 - extra), 'q', now, 'u', now, 'm', '')
      redis.call('PERSIST', dkey)
      if not f[5] or order_admit(heads, held, f[5], dlv, member) then redis.call('ZADD', queue, now, member) end
      reply = 'queued'
    end
    if reply == 'queued' then
      queued_any = true
      -- The event must outlive its delivery (unless it keeps no TTL: it is a snapshot).
      if redis.call('PTTL', ekey) > 0 then redis.call('PEXPIRE', ekey, retention) end
    end
  end
  replies[#replies + 1] = reply
end
pushes.send('RPUSH')
if queued_any then redis.call('ZADD', ready, 'LT', now, wh) end
return replies
