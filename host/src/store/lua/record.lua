-- Records the outcomes of attempts of one partition's deliveries, many per call (group
-- commit), each as if recorded alone and in order; a row that cannot be read fails only
-- its own reply.
-- KEYS: 1 ready, 2 deliveries ended awaiting their move to history (zset,
--       `store::queue::ended`), then ARGV[4] webhooks' counts of the day (`store::queue::tally`),
--       then per outcome: 1 the delivery, 2 its webhook's queue, and for an
--       ordered delivery 3 its webhook's heads, 4 held deliveries (`order.lua`), 5 list of
--       new deliveries
-- ARGV: 1 now (ms), 2 how many fields a plain row has (`store::row`: one nothing but
--       publish and its first load wrote, read by its length alone), 3 '1' when history is
--       kept in PostgreSQL (a delivery that ends is noted in KEYS[2]), 4 how many webhooks'
--       counts follow, 5 their TTL (s), then each one's webhook id, then per outcome:
--       1 'o' for an ordered delivery (its row has `z`; three more keys), else '', 2 queue
--       member (`dlv org evt`), 3 webhook id, 4 outcome, 5 attempt number, 6 attempt (JSON
--       array, '' if no request was made), 7 the request's signature, 8 next due (ms, for
--       `retry`), 9 number of extra fields, then that many field, value pairs
-- Outcomes: succeeded | retry | failed | filtered | cancelled ('gone' is recorded as failed;
-- the webhook is switched off by the caller).
-- Returns per outcome: the delivery's status after it ('pending' while a retry is due),
-- 'missing' (expired), or {'error', why}.
-- Each attempt made (a request sent) counts in its webhook's hour too, succeeded or failed
-- (`a` and `e`), beside the deliveries it ended (`s` and `f`).
-- Recording the same attempt twice (a retried call) changes nothing the second time.
-- A final outcome of an ordered delivery (its row has `z`) releases its subject's next.
local now, plain, history = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local ready, ended = KEYS[1], KEYS[2]
-- Deliveries an attempt ended here and attempts made, per webhook, added to its counts of
-- the hour at the end.
local tallies, counted = tonumber(ARGV[4]), {}
local tally_key = {}
for i = 1, tallies do tally_key[ARGV[5 + i]] = KEYS[2 + i] end
local function counts(wh)
  local c = counted[wh]
  if not c then c = {succeeded = 0, failed = 0, tried_ok = 0, tried_bad = 0}; counted[wh] = c end
  return c
end
local function count(wh, status)
  if status ~= 'succeeded' and status ~= 'failed' then return end
  local c = counts(wh)
  c[status] = c[status] + 1
end
local function count_attempt(wh, outcome)
  local c = counts(wh)
  if outcome == 'succeeded' then c.tried_ok = c.tried_ok + 1 else c.tried_bad = c.tried_bad + 1 end
end
-- What a plain row reads as: there, pending, never recorded (and not ordered).
local PLAIN = {true, false, false, false, false}
local FINAL = {succeeded = 'succeeded', failed = 'failed', gone = 'failed', filtered = 'filtered', cancelled = 'cancelled'}
-- Members that leave their queues, removed with one call per queue at the end.
local leaving = batches()
local leave = leaving.add

-- `fields`: ARGV position of the extra fields' count.
local function record(dkey, queue, order, member, wh, outcome, attempt_no, attempt, signature, due, fields)
  local f = PLAIN
  local len = redis.call('HLEN', dkey)
  -- (An ordered row whose only other field is its subject reads as plain, with it.)
  local z = order and len == plain + 1 and redis.call('HGET', dkey, 'z')
  if z then
    f = {true, false, false, false, z}
  elseif len ~= plain then
    f = redis.call('HMGET', dkey, 'o', 's', 'x', 'l', 'z')
  end
  if not f[1] then
    leave(queue, member)
    return 'missing'
  end
  local status, attempts, last = f[2], f[3], f[4]
  if attempt ~= '' and last == attempt_no then
    return status or 'pending'
  end
  if attempt ~= '' then count_attempt(wh, outcome) end
  -- `u` (last change) only without an attempt: otherwise the attempt says when.
  local sets = {}
  if attempt == '' then sets = {'u', now} end
  for i = fields + 1, fields + 2 * tonumber(ARGV[fields]) do sets[#sets + 1] = ARGV[i] end
  if attempt ~= '' then
    if not attempts or attempts == '' then
      attempts = '[' .. attempt .. ']'
    else
      attempts = string.sub(attempts, 1, -2) .. ',' .. attempt .. ']'
    end
    local n = #sets
    sets[n + 1], sets[n + 2], sets[n + 3], sets[n + 4], sets[n + 5], sets[n + 6] =
      'x', attempts, 'g', signature, 'l', attempt_no
  end
  local new_status = status
  if status then
    -- Already final (failed or cancelled with its webhook while in flight): keep it.
    leave(queue, member)
  elseif outcome == 'retry' then
    new_status = 'pending'
    sets[#sets + 1] = 'q'
    sets[#sets + 1] = due
    redis.call('ZADD', queue, due, member)
    redis.call('ZADD', ready, 'LT', due, wh)
  else
    -- (`q` is read only while pending: a final status needs no clearing of it.)
    new_status = FINAL[outcome]
    count(wh, new_status)
    sets[#sets + 1] = 's'
    sets[#sets + 1] = new_status
    leave(queue, member)
    if history then redis.call('ZADD', ended, now, string.sub(member, 1, string.find(member, ' ', 1, true) - 1)) end
    if f[5] and order then
      order_release(order[1], order[2], order[3], ready, now, wh, f[5], string.sub(member, 1, string.find(member, ' ', 1, true) - 1))
    end
  end
  -- (No TTL: records go with their day's index, `trim.lua`.)
  redis.call('HSET', dkey, unpack(sets))
  return new_status
end

local replies = {}
local a, k = 6 + tallies, 3 + tallies
while k <= #KEYS do
  local order = false
  if ARGV[a] == 'o' then order = {KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]} end
  local ok, reply = pcall(record, KEYS[k], KEYS[k + 1], order, ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4],
    ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], a + 8)
  k = k + (order and 5 or 2)
  a = a + 9 + 2 * tonumber(ARGV[a + 8])
  if ok then
    replies[#replies + 1] = reply
  else
    replies[#replies + 1] = {'error', type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
leaving.send('ZREM')
local hour = math.floor(tonumber(now) / 3600000) % 24
for wh, c in pairs(counted) do
  local key = tally_key[wh]
  if key then
    if c.succeeded > 0 then redis.call('HINCRBY', key, hour .. 's', c.succeeded) end
    if c.failed > 0 then redis.call('HINCRBY', key, hour .. 'f', c.failed) end
    if c.tried_ok > 0 then redis.call('HINCRBY', key, hour .. 'a', c.tried_ok) end
    if c.tried_bad > 0 then redis.call('HINCRBY', key, hour .. 'e', c.tried_bad) end
    redis.call('EXPIRE', key, ARGV[5])
  end
end
return replies
