-- Claims deliveries of one partition for a worker, per webhook, within the worker's free
-- slots: a webhook at its in-flight cap in this worker is not taken from (no parking; its
-- deliveries wait in its queue for a worker with room), and the reply says which webhooks
-- to ask for next, so a claim needs one call.
-- KEYS: 1 ready (webhooks with queued deliveries, by next due), then per webhook asked for:
--       its queue
-- ARGV: 1 now (ms), 2 lease until (ms), 3 most deliveries to take, 4 most webhooks to hint,
--       then per webhook asked for: 1 its id, 2 most to take of it
-- Returns {'claimed', {webhook, member, webhook, member, ...}, 'hints', {webhook, ...},
--          'next_due', ms of the earliest due webhook or -1}
local ready, now, lease_until = KEYS[1], ARGV[1], ARGV[2]
local budget, hints_wanted = tonumber(ARGV[3]), tonumber(ARGV[4])
local claimed = {}
for i = 2, #KEYS do
  local wh, limit = ARGV[3 + 2 * (i - 1)], tonumber(ARGV[4 + 2 * (i - 1)])
  local taken = take(KEYS[i], now, lease_until, math.min(limit, budget))
  budget = budget - #taken
  for _, member in ipairs(taken) do
    claimed[#claimed + 1] = wh
    claimed[#claimed + 1] = member
  end
  -- The webhook's place in `ready`: when its earliest member (due, retry or lease) is due.
  local first = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
  if first[2] then
    redis.call('ZADD', ready, first[2], wh)
  else
    redis.call('ZREM', ready, wh)
  end
end
local hints = redis.call('ZRANGE', ready, '-inf', now, 'BYSCORE', 'LIMIT', 0, hints_wanted)
local earliest = redis.call('ZRANGE', ready, 0, 0, 'WITHSCORES')
return {'claimed', claimed, 'hints', hints, 'next_due', tonumber(earliest[2] or '-1')}
