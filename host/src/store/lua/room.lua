-- Room in bounded sets whose entries each hold their place until a time: test events of
-- the last minute (each holds its place for a minute), an organisation's unused portal
-- links (each until it expires). KEYS: the sets (one slot). ARGV: 1 now (ms), 2 the new
-- entry, 3 until when it holds its place (ms), then each set's limit, in KEYS' order.
-- Entries whose time has passed leave every set first. When each set has fewer entries
-- than its limit, the entry is added to all of them (each set then expires with its last
-- entry) and the reply is {0, 0}; else nothing is added and the reply is {i, wait}: the
-- first full set (1-based) and how long until its first entry leaves (ms, at least 1).
local now, entry, until_ms = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then
    local first = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    return {i, math.max(1, tonumber(first[2]) - now)}
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], until_ms, entry)
  local last = redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[i], math.max(until_ms, tonumber(last[2])))
end
return {0, 0}
