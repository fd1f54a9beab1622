-- Forgets the first entries of a day index once history has them (`store::queue::index`):
-- they leave the list and its base grows by as many, so every entry keeps its place.
-- KEYS: 1 the index (list), 2 the partition's index bases (hash), 3 the partition's indexes
--       to move (zset)
-- ARGV: 1 the base the mover read, 2 how many first entries history has, 3 when the first
--       entry left was made (ms), if entries are left
-- Returns 1, or 0 when the base was no longer the one read (another mover went first).
local index, bases, moves = KEYS[1], KEYS[2], KEYS[3]
local base = tonumber(redis.call('HGET', bases, index) or '0')
if base ~= tonumber(ARGV[1]) then return 0 end
local n = tonumber(ARGV[2])
redis.call('LTRIM', index, n, -1)
redis.call('HSET', bases, index, base + n)
if redis.call('EXISTS', index) == 1 then
  redis.call('ZADD', moves, ARGV[3], index)
else
  redis.call('ZREM', moves, index)
end
return 1
