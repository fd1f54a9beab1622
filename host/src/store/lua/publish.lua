-- Accepts events of one partition and fans each out, each event all or nothing: a batch of
-- publishes in one call (group commit). An event id seen before changes nothing.
-- KEYS: 1 ready (the partition's webhooks with work), 2 released events (list), 3 events
--       accepted awaiting their move to history (zset, `store::events::accepted`), 4 indexes
--       whose first entries will move to history (zset, `store::queue::index`), 5 the
--       publishers' events of the day per organisation (hash, `store::events::daily`), 6 the
--       organisations' versions as this partition knows them (hash, `store::versions`), then per
--       event: 1 its key, 2 its organisation's snapshots (hash), 3 its organisation's event
--       log of the hour, and for a source's request 4 its duplicate id's mark, 5 the source's
--       listing here (`store::tenants::sources`), then per delivery: 1 the delivery, 2 the organisation's index of
--       the day, 3 the webhook's index of the day, 4 the webhook's list of new deliveries,
--       and for a webhook with ordered deliveries 5 its heads, 6 its held deliveries
--       (`order.lua`)
-- ARGV: 1 now (ms), 2 most snapshots per organisation, 3 '1' when history is kept in
--       PostgreSQL (each new event is noted in KEYS[3], each day index and event log hour
--       written to in KEYS[4] unless it is there, a deletion leaves a tombstone pointer),
--       4 when KEYS[5] expires (ms), 5 how many of a source's requests its listing keeps, 6 how
--       long a listing stays after its last request (ms), then per event:
--       1 event id, 2 organisation, 3 stored value, 4 action, 5 subject (`Type:id`), 6 event
--       time (ms), 7 '1' if the subject was deleted, 8 snapshot: 'n' not kept (too large), 'y'
--       kept, 'c' kept and the organisation's cap enforced (the caller asks this of one
--       snapshot in eight, so the check costs little; each check evicts up to 16),
--       9 number of deliveries, 10 its event log entry ('' when there is no log), 11 when
--       the log's hour expires (ms), 12 its retention (ms: its organisation's plan's), 13 '1'
--       when a publisher sent it (it counts among its organisation's events of the day),
--       14 the organisation's version its webhooks were read at, 15 for a source's request
--       how long its mark stays (ms; else ''), 16 its listing entry, then per delivery:
--       1 delivery id, 2 webhook id, 3 's' when the webhook's deliveries keep their subject's
--       order, else ''
-- An ordered delivery's row also has `z`, its subject; it is queued only when it is its
-- subject's head, else held (`order.lua`).
-- Returns per event: 'new', 'dup', 'stale' (its version is older than the partition's
-- copy: read before a change that has since returned; nothing of it is written), or 'seen'
-- (a source's request whose duplicate id has a mark: nothing is written; the mark names
-- the event it became).
-- A delivery row (`store::row`) holds only what cannot be derived: `o` organisation, `w` webhook, `e`
-- event, `a` action (created_at is in its id, pending is the absence of `s`).
-- Numbers that only go back to Redis stay strings: Lua would format them again.
local now, cap, history, published_expires = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local ready, released, accepted, indexes, published = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local versions = KEYS[6]
local listing_kept, listing_ms = tonumber(ARGV[5]), ARGV[6]
local ki, ai = 7, 7
-- Each organisation's publishers' events, counted once per organisation at the end.
local counted = {}
local indexes_now = {}
local accepted_now = {}
local replies = {}
-- Index and queue entries are gathered per key and appended with one variadic call each.
local pushes = batches()
local push = pushes.add
local ready_lt = {}
-- Event log entries likewise, and when each log touched expires.
local logs = batches()
local log_expiry = {}

-- Keeps the newest event about each record (for report exports): a pointer in the
-- organisation's snapshot hash (`snapshots.lua`); that event keeps no TTL while it is the newest. Superseded
-- ones go to the released list, whose events get their TTL back later (their keys are not
-- declared here). Beyond the cap, the least recently updated records (sampled) go first
-- (without history only).
local function keep_snapshot(skey, org, evt, subject, ms_text, deleted, check_cap)
  local ms = tonumber(ms_text)
  local current = redis.call('HGET', skey, subject)
  local cur_ms, cur_evt
  if current then
    cur_ms, cur_evt = snapshot_pointer(current)
    -- (A value that is no pointer is replaced.)
    if not cur_ms then current = nil end
  end
  if deleted then
    if current then redis.call('RPUSH', released, org .. ' ' .. cur_evt) end
    -- With history, a tombstone (`snapshots.lua`) hides what moved to PostgreSQL before.
    if history then
      redis.call('HSET', skey, subject, ms_text .. 'd ' .. evt)
    elseif current then
      redis.call('HDEL', skey, subject)
    end
    return false
  end
  if current and cur_ms > ms then return false end
  redis.call('HSET', skey, subject, ms_text .. ' ' .. evt)
  if current then
    if cur_evt ~= evt then redis.call('RPUSH', released, org .. ' ' .. cur_evt) end
    return true
  end
  -- With history the pointers leave with their events, so the cap is not enforced: an
  -- eviction would let an older pointer that moved to PostgreSQL show again.
  if not check_cap or history then return true end
  local over = redis.call('HLEN', skey) - cap
  for _ = 1, math.min(over, 16) do
    local oldest, oldest_ms = nil, nil
    local sample = redis.call('HRANDFIELD', skey, 8, 'WITHVALUES')
    for i = 1, #sample, 2 do
      local f, m = sample[i], snapshot_pointer(sample[i + 1])
      if f ~= subject and m and (not oldest_ms or m < oldest_ms) then oldest, oldest_ms = f, m end
    end
    if oldest then
      local _, oldest_evt = snapshot_pointer(redis.call('HGET', skey, oldest))
      redis.call('HDEL', skey, oldest)
      redis.call('RPUSH', released, org .. ' ' .. oldest_evt)
    end
  end
  return true
end

while ai <= #ARGV do
  local evt, org, value, action, subject = ARGV[ai], ARGV[ai + 1], ARGV[ai + 2], ARGV[ai + 3], ARGV[ai + 4]
  local ms, deleted, snapshot, n = ARGV[ai + 5], ARGV[ai + 6] == '1', ARGV[ai + 7], tonumber(ARGV[ai + 8])
  local entry, log_expires, retention, counts = ARGV[ai + 9], ARGV[ai + 10], ARGV[ai + 11], ARGV[ai + 12] == '1'
  local version, window, listed = tonumber(ARGV[ai + 13]), ARGV[ai + 14], ARGV[ai + 15]
  local ekey, skey, lkey = KEYS[ki], KEYS[ki + 1], KEYS[ki + 2]
  local mark, listing
  if window ~= '' then mark, listing, ki = KEYS[ki + 3], KEYS[ki + 4], ki + 5 else ki = ki + 3 end
  ai = ai + 16
  if tonumber(redis.call('HGET', versions, org) or '0') > version then
    replies[#replies + 1] = 'stale'
  elseif mark and redis.call('SET', mark, evt, 'NX', 'GET', 'PX', window) then
    replies[#replies + 1] = 'seen'
  -- Stored without a TTL, as the newest snapshot of its record (the usual case), else
  -- given one right after: one call either way for most events.
  elseif not redis.call('SET', ekey, value, 'NX') then
    replies[#replies + 1] = 'dup'
  else
    local newest = (snapshot ~= 'n' or deleted) and keep_snapshot(skey, org, evt, subject, ms, deleted, snapshot == 'c')
    if not newest then
      redis.call('PEXPIRE', ekey, retention)
    end
    if entry ~= '' then
      logs.add(lkey, entry)
      log_expiry[lkey] = log_expires
      if history then indexes_now[lkey] = true end
    end
    if history then
      accepted_now[#accepted_now + 1] = now
      accepted_now[#accepted_now + 1] = ekey
    end
    local base = ki
    for d = 0, n - 1 do
      local dlv, wh, ordered = ARGV[ai + 3 * d], ARGV[ai + 3 * d + 1], ARGV[ai + 3 * d + 2] == 's'
      local member = dlv .. ' ' .. org .. ' ' .. evt
      local queued = true
      if ordered then
        redis.call('HSET', KEYS[base], 'o', org, 'w', wh, 'e', evt, 'a', action, 'z', subject)
        queued = order_admit(KEYS[base + 4], KEYS[base + 5], subject, dlv, member)
      else
        -- Exactly these four fields: with its count, a plain row (`store::row`).
        redis.call('HSET', KEYS[base], 'o', org, 'w', wh, 'e', evt, 'a', action)
      end
      -- Index entries are ids without their `dlv_` (keys::index_entry).
      local entry = string.sub(dlv, 5)
      push(KEYS[base + 1], entry)
      push(KEYS[base + 2], entry)
      if history then
        indexes_now[KEYS[base + 1]] = true
        indexes_now[KEYS[base + 2]] = true
      end
      if queued then
        push(KEYS[base + 3], member)
        ready_lt[wh] = true
      end
      base = base + (ordered and 6 or 4)
    end
    if listing then
      redis.call('LPUSH', listing, listed)
      redis.call('LTRIM', listing, 0, listing_kept - 1)
      redis.call('PEXPIRE', listing, listing_ms)
    end
    if counts then counted[org] = (counted[org] or 0) + 1 end
    replies[#replies + 1] = 'new'
  end
  -- (A duplicate's or stale event's deliveries' keys and arguments are skipped alike.)
  for d = 0, n - 1 do ki = ki + (ARGV[ai + 3 * d + 2] == 's' and 6 or 4) end
  ai = ai + 3 * n
end

local any_counted = false
for org, n in pairs(counted) do
  redis.call('HINCRBY', published, org, n)
  any_counted = true
end
if any_counted then redis.call('PEXPIREAT', published, published_expires, 'NX') end
pushes.send('RPUSH')
logs.send('RPUSH')
if #accepted_now > 0 then redis.call('ZADD', accepted, unpack(accepted_now)) end
for index in pairs(indexes_now) do redis.call('ZADD', indexes, 'NX', now, index) end
-- A log's hour expires once (NX: a list that has its expiry keeps it).
for lkey, at in pairs(log_expiry) do redis.call('PEXPIREAT', lkey, at, 'NX') end
local lt = {}
for wh in pairs(ready_lt) do
  lt[#lt + 1] = now
  lt[#lt + 1] = wh
end
if #lt > 0 then redis.call('ZADD', ready, 'LT', unpack(lt)) end
return replies
