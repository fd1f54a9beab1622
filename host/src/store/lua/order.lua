-- Shared by the scripts that queue or end deliveries (prepended to them): per-subject order
-- for webhooks with `ordering: "subject"` (contract §7). Of each subject, one delivery — the
-- head — is queued, being attempted or waiting for its retry; later ones are held, in
-- acceptance order, until it ends. A delivery of an ordered webhook carries its subject in
-- its row (`z`), so ending it releases the next whatever the webhook's setting is by then.
-- `heads`: the webhook's heads here (hash: 's' .. subject → head delivery id, '#' the last
-- hold's number); `held`: its held deliveries (zset, by lex: subject NUL number NUL member).

-- Admits a new delivery of `subject` (queue member `member`): true when it is its subject's
-- head (the caller queues it), false when it is held behind the head.
local function order_admit(heads, held, subject, dlv, member)
  if redis.call('HSETNX', heads, 's' .. subject, dlv) == 1 then return true end
  local n = redis.call('HINCRBY', heads, '#', 1)
  redis.call('ZADD', held, 0, subject .. '\0' .. string.format('%012d', n) .. '\0' .. member)
  return false
end

-- The queue member of a held entry.
local function order_member(entry, subject)
  return string.sub(entry, #subject + 15)
end

-- Delivery `dlv` of `subject` ended: if it was the head, the next held delivery of the
-- subject becomes the head and is queued (`new`: the webhook's list of new deliveries,
-- `ready`: the partition's webhooks with work); with none, the subject has no head.
local function order_release(heads, held, new, ready, now, wh, subject, dlv)
  local field = 's' .. subject
  if redis.call('HGET', heads, field) ~= dlv then return end
  local entry = redis.call('ZRANGE', held, '[' .. subject .. '\0', '(' .. subject .. '\1', 'BYLEX', 'LIMIT', 0, 1)[1]
  if not entry then
    redis.call('HDEL', heads, field)
    return
  end
  redis.call('ZREM', held, entry)
  local member = order_member(entry, subject)
  redis.call('HSET', heads, field, string.sub(member, 1, string.find(member, ' ', 1, true) - 1))
  redis.call('RPUSH', new, member)
  redis.call('ZADD', ready, 'LT', now, wh)
end
