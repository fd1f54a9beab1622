-- Raises an organisation's version as one partition knows it, never lowering it (two changes
-- may write their copies in either order).
-- KEYS: 1 the partition's versions (hash). ARGV: 1 organisation, 2 its version.
local known = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if known < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
