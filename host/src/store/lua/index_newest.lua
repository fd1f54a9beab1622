-- The newest of a run of indexes (day indexes, or hours of the event log) that holds
-- entries here or in history (`store::queue::index`), found in one step instead of one
-- read per empty day or hour.
-- KEYS: 1 the partition's index bases (hash: index key -> its base), 2.. the indexes,
--       newest first
-- ARGV: none
-- Returns the position (from 0) among KEYS[2..] of the first index with entries here or a
-- base above 0, or -1 when none has.
for i = 2, #KEYS do
  if redis.call('LLEN', KEYS[i]) > 0 or tonumber(redis.call('HGET', KEYS[1], KEYS[i]) or '0') > 0 then
    return i - 2
  end
end
return -1
