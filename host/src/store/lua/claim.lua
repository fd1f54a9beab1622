-- Claims deliveries of one partition for a worker, per webhook, within the worker's free
-- slots: a webhook at its in-flight cap in this worker is not taken from (no parking; its
-- deliveries wait in its queue for a worker with room), and the reply says which webhooks
-- to ask for next, so a claim needs one call. Of a webhook, retries that are due and
-- deliveries whose worker died (their lease ran out) come first, then new ones.
-- KEYS: 1 ready (webhooks with queued deliveries, by next due), then per webhook asked for:
--       1 its sorted queue (retries, leases), 2 its list of new deliveries
-- ARGV: 1 now (ms), 2 lease until (ms), 3 most deliveries to take, 4 most webhooks to hint,
--       5 number of webhooks not to hint (the worker has no room for them now), then their
--       ids, then per webhook asked for: 1 its id, 2 most to take of it
-- Returns {'claimed', {webhook, member, webhook, member, ...}, 'hints', {webhook, ...},
--          'next_due', when the earliest webhook is due (ms; now when any is due already),
--          or -1 when none has anything queued}
local ready, now, lease_until = KEYS[1], ARGV[1], ARGV[2]
local budget, hints_wanted, n_excluded = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local excluded = {}
for j = 6, 5 + n_excluded do excluded[ARGV[j]] = true end
local claimed = {}
for i = 2, #KEYS, 2 do
  local queue, new = KEYS[i], KEYS[i + 1]
  local a = 6 + n_excluded + (i - 2)
  local wh, limit = ARGV[a], math.min(tonumber(ARGV[a + 1]), budget)
  local taken = take(queue, now, lease_until, limit)
  -- Whether `new` may still hold deliveries: a pop that returns fewer than it asked for
  -- emptied it (one `LLEN` fewer).
  local more_new = true
  if #taken < limit then
    local wanted = limit - #taken
    local fresh = redis.call('LPOP', new, wanted)
    more_new = fresh and #fresh == wanted
    if fresh then
      local args = {}
      for j, member in ipairs(fresh) do
        args[2 * j - 1] = lease_until
        args[2 * j] = member
        taken[#taken + 1] = member
      end
      redis.call('ZADD', queue, unpack(args))
    end
  end
  budget = budget - #taken
  for _, member in ipairs(taken) do
    claimed[#claimed + 1] = wh
    claimed[#claimed + 1] = member
  end
  -- The webhook's place in `ready`: now while it has new deliveries, else when its
  -- earliest retry or lease is due; out of it when it has nothing queued.
  if more_new and redis.call('LLEN', new) > 0 then
    redis.call('ZADD', ready, now, wh)
  else
    local first = redis.call('ZRANGE', queue, '0', '0', 'WITHSCORES')
    if first[2] then
      redis.call('ZADD', ready, first[2], wh)
    else
      redis.call('ZREM', ready, wh)
    end
  end
end
local hints = {}
-- (Constant numbers are passed as text: Redis formats a Lua number for every call.)
local due = redis.call('ZRANGE', ready, '-inf', now, 'BYSCORE', 'LIMIT', '0', hints_wanted + n_excluded)
for _, wh in ipairs(due) do
  if not excluded[wh] and #hints < hints_wanted then hints[#hints + 1] = wh end
end
-- The earliest due time: with any webhook due it is at most now, which is all the caller
-- needs to know (it claims again rather than sleep).
local next_due = tonumber(now)
if #due == 0 then next_due = tonumber(redis.call('ZRANGE', ready, '0', '0', 'WITHSCORES')[2] or '-1') end
return {'claimed', claimed, 'hints', hints, 'next_due', next_due}
