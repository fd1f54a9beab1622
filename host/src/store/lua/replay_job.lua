-- A webhook's replay job (`store::replay`): its record and its place in the lease queue of
-- replays, changed together.
-- KEYS: 1 the record, 2 the queue of replays
-- ARGV: 1 webhook id, 2 'create' | 'progress' | 'end', 3 lease until (create) or how long
--       the ended record is kept (ms, end), then field, value pairs to set
-- Returns 'running' (create: one of this webhook is still running), 'missing' (progress,
-- end: no such replay, or it ended), else 'done'.
local record, queue, wh, mode, when = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
local state = redis.call('HGET', record, 'state')
if mode == 'create' then
  if state == 'running' then return 'running' end
  redis.call('DEL', record)
  redis.call('HSET', record, unpack(ARGV, 4))
  redis.call('ZADD', queue, when, wh)
  return 'done'
end
if state ~= 'running' then return 'missing' end
redis.call('HSET', record, unpack(ARGV, 4))
if mode == 'end' then
  redis.call('ZREM', queue, wh)
  redis.call('PEXPIRE', record, when)
end
return 'done'
