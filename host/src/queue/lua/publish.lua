-- Accepts an event and fans it out, all or nothing.
-- ARGV: 1 prefix, 2 org, 3 event id, 4 envelope JSON, 5 action, 6 now (RFC 3339),
--       7 retention (ms), 8 delivery id base (24 chars), 9 event created_at,
--       10 the subject as `Type:id`, 11 (unused), 12 '1' if the subject was deleted,
--       13 the event's time (ms), 14 most snapshots kept per organisation, 15 largest
--       event kept as a snapshot (bytes)
-- Returns -1 when the event id was accepted before (nothing is written), else the number
-- of deliveries created: one per active webhook of the organisation subscribed to the action.
-- A new delivery holds only what cannot be derived: readers take a missing `attempts` as
-- [], `attempt_count` as 0, `updated_at` as `created_at`, and `attempt_budget` as the
-- retry schedule's length plus one.
local P, org, evt, body, action, ts = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local ttl, base, event_at = tonumber(ARGV[7]), ARGV[8], ARGV[9]
local ekey = P .. ':evt:' .. org .. ':' .. evt
if redis.call('EXISTS', ekey) == 1 then return -1 end
redis.call('SET', ekey, body, 'PX', ttl)

-- Keep the newest snapshot of the subject (for report exports): the snapshot points at the
-- newest event about the record (whose envelope carries it), and that event stops expiring
-- until a newer one replaces it, the record is deleted, or the cap evicts it.
local subject, deleted, event_ms = ARGV[10], ARGV[12], tonumber(ARGV[13])
local skey = P .. ':snap:' .. org .. ':' .. subject
local sindex = P .. ':org:' .. org .. ':snaps'
local function release(event_key)
  if event_key then redis.call('PEXPIRE', event_key, ttl) end
end
if deleted == '1' then
  release(redis.call('HGET', skey, 'event'))
  redis.call('DEL', skey)
  redis.call('ZREM', sindex, subject)
elseif #body <= tonumber(ARGV[15]) then
  local current = redis.call('HMGET', skey, 'at', 'event')
  local at = tonumber(current[1] or '')
  if not at or at <= event_ms then
    release(current[2])
    redis.call('HSET', skey, 'at', tostring(event_ms), 'event', ekey)
    redis.call('PERSIST', ekey)
    if redis.call('ZADD', sindex, event_ms, subject) == 1 then
      local excess = redis.call('ZCARD', sindex) - tonumber(ARGV[14])
      if excess > 0 then
        local popped = redis.call('ZPOPMIN', sindex, excess)
        for i = 1, #popped, 2 do
          local old = P .. ':snap:' .. org .. ':' .. popped[i]
          release(redis.call('HGET', old, 'event'))
          redis.call('DEL', old)
        end
      end
    else
      redis.call('ZADD', sindex, event_ms, subject)
    end
  end
end

local alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
local needle = '"' .. action .. '"'
local n = 0
for _, wh in ipairs(redis.call('ZRANGE', P .. ':org:' .. org .. ':webhooks', 0, -1)) do
  local f = redis.call('HMGET', P .. ':wh:' .. wh, 'active', 'subscribed_actions')
  if f[1] == '1' and f[2] and string.find(f[2], needle, 1, true) then
    local hi, lo = math.floor(n / 32) + 1, (n % 32) + 1
    local dlv = 'dlv_' .. base .. string.sub(alphabet, hi, hi) .. string.sub(alphabet, lo, lo)
    local dkey = P .. ':dlv:' .. dlv
    redis.call('HSET', dkey, 'id', dlv, 'org_id', org, 'webhook_id', wh, 'event_id', evt,
      'action', action, 'event_created_at', event_at, 'status', 'pending', 'created_at', ts)
    redis.call('PEXPIRE', dkey, ttl)
    redis.call('ZADD', P .. ':org:' .. org .. ':dlvs', 0, dlv)
    redis.call('ZADD', P .. ':wh:' .. wh .. ':dlvs', 0, dlv)
    redis.call('SADD', P .. ':wh:' .. wh .. ':pending', dlv)
    redis.call('XADD', P .. ':q:ready', '*', 'd', dlv, 'w', wh)
    n = n + 1
  end
end
return n
