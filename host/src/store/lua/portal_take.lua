-- Takes a portal link for its one use. KEYS: 1 the link's hash. ARGV: 1 now (ms).
-- Answers {'state', s, field, value, ...}: s is 'unknown' (no such link, or it expired
-- long ago), 'used' (taken before), 'expired' (past its expiry) or 'fresh' (taken now:
-- marked used, so no second call answers 'fresh'); the link's fields follow unless unknown.
local f = redis.call('HGETALL', KEYS[1])
if #f == 0 then return {'state', 'unknown'} end
local state = 'fresh'
local fields = {}
for i = 1, #f, 2 do fields[f[i]] = f[i + 1] end
if fields['used'] == '1' then
  state = 'used'
elseif tonumber(fields['expires_ms']) <= tonumber(ARGV[1]) then
  state = 'expired'
else
  redis.call('HSET', KEYS[1], 'used', '1')
end
local reply = {'state', state}
for i = 1, #f do reply[#reply + 1] = f[i] end
return reply
