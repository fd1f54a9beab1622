-- Forgets a record's snapshot pointer in one partition after its deletion was published in
-- another (`events::standby`: a pointer left here by an event published while the record's
-- own partition could not acknowledge writes, or left at home by one before). A pointer
-- newer than the deletion stays (the record was made again). The event it pointed to goes
-- to the released list, which gives it its TTL back.
-- KEYS: 1 the organisation's snapshots (hash), 2 the partition's released list
-- ARGV: 1 the record ('Type:id'), 2 the deletion's event time (ms), 3 the organisation
-- Reply: 1 if a pointer was forgotten, else 0
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
local ms, evt = snapshot_pointer(current)
if not ms or ms > tonumber(ARGV[2]) then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[3] .. ' ' .. evt)
return 1
