-- Rotates a webhook's signing secret: the current one becomes the previous one (until its
-- grace period ends; a grace period of 0 forgets it at once), replacing any earlier previous
-- one.
-- KEYS: 1 the webhook
-- ARGV: 1 organisation, 2 the new secret, 3 end of the grace period (ms; '' for none),
--       4 now (RFC 3339, `updated_at`)
-- Returns 1, or 0 if the organisation has no such webhook.
local key = KEYS[1]
if redis.call('HGET', key, 'org_id') ~= ARGV[1] then return 0 end
local previous, expires = '', ARGV[3]
if expires ~= '' then previous = redis.call('HGET', key, 'signing_secret') or '' end
if previous == '' then expires = '' end
redis.call('HSET', key, 'signing_secret', ARGV[2], 'previous_secret', previous, 'previous_secret_expires', expires,
  'updated_at', ARGV[4])
return 1
