-- Reads a day index whose first entries may have moved to history (`store::queue::index`).
-- Places count from the index's first entry ever: the entries at places below its base
-- moved, the others are here.
-- KEYS: 1 the index (list), 2 the partition's index bases (hash: index key → its base)
-- ARGV: 1 the end place (exclusive; -1: the index's end), 2 most entries
-- Returns {base, end, entries at places [max(base, end - most), end), in order}.
local base = tonumber(redis.call('HGET', KEYS[2], KEYS[1]) or '0')
local total = base + redis.call('LLEN', KEYS[1])
local stop = tonumber(ARGV[1])
if stop < 0 or stop > total then stop = total end
local from = math.max(base, stop - tonumber(ARGV[2]))
local out = {tostring(base), tostring(stop)}
if stop > from then
  local got = redis.call('LRANGE', KEYS[1], from - base, stop - base - 1)
  for i = 1, #got do out[#out + 1] = got[i] end
end
return out
