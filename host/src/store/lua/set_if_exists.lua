-- Sets fields of a hash that exists. KEYS: 1 the hash. ARGV: field, value pairs.
-- Returns 1 if set, 0 if there is no such hash.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
