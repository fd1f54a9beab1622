-- Writes a delivery's row back from history (a manual retry, a replay of a moved
-- delivery), as it was, unless the row is here already; noted in the partition's ended set
-- again (it ended), so it moves once more unless it goes live meanwhile.
-- KEYS: 1 the row, 2 the partition's ended deliveries
-- ARGV: 1 its delivery id, 2 now (ms), then field, value pairs
-- Returns 1 when written, 0 when the row was here.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
