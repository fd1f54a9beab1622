-- Keeps a webhook's failure streak after recorded attempts, and switches it off when the
-- streak has lasted long enough (or an attempt got 410 Gone).
-- KEYS: 1 the webhook, then per action of the catalogue and per source of the organisation:
--       its subscribers set, then the organisation's filters
-- ARGV: 1 now (ms), 2 now (RFC 3339), 3 failures before deactivation, 4 shortest failing
--       span (ms), 5 '1' if a success came first (it ends the streak), 6 failed attempts
--       after it, 7 '1' if one of them got 410 Gone, 8 the webhook's id
-- Returns the deactivation reason ('failing' or 'gone') when this switched the webhook
-- off, else ''.
local key, now, ts = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local max_failures, span = tonumber(ARGV[3]), tonumber(ARGV[4])
local reset, failures, gone = ARGV[5] == '1', tonumber(ARGV[6]), ARGV[7] == '1'
local f = redis.call('HMGET', key, 'active', 'fail_count', 'fail_since')
if not f[1] then return '' end
local count, since = tonumber(f[2] or '0') or 0, tonumber(f[3] or '')
if reset then count, since = 0, nil end
if failures > 0 then
  count = count + failures
  since = since or now
end
if count == 0 then
  if f[2] ~= '0' then redis.call('HSET', key, 'fail_count', '0', 'fail_since', '') end
  return ''
end
redis.call('HSET', key, 'fail_count', tostring(count), 'fail_since', tostring(since))
local reason = ''
if gone then
  reason = 'gone'
elseif count >= max_failures and now - since >= span then
  reason = 'failing'
end
if reason == '' or f[1] ~= '1' then return '' end
redis.call('HSET', key, 'active', '0', 'deactivated_at', ts, 'deactivation_reason', reason, 'updated_at', ts)
for i = 2, #KEYS - 1 do redis.call('SREM', KEYS[i], ARGV[8], ARGV[8] .. ' subject') end
redis.call('HDEL', KEYS[#KEYS], ARGV[8])
return reason
