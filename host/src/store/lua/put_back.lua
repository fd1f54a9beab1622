-- Puts a delivery that was claimed and loaded, but not attempted, back in its webhook's
-- queue, due at a later time (its webhook is paused): the load counted an attempt that did
-- not start, so the count goes back one.
-- KEYS: 1 ready, 2 the webhook's queue, 3 the delivery's row
-- ARGV: 1 queue member, 2 webhook id, 3 due (ms)
-- Returns 1, or 0 when the member had left the queue (nothing changed).
if redis.call('ZADD', KEYS[2], 'XX', 'CH', ARGV[3], ARGV[1]) == 0 and not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], 'LT', ARGV[3], ARGV[2])
if redis.call('HEXISTS', KEYS[3], 'n') == 1 then redis.call('HINCRBY', KEYS[3], 'n', -1) end
return 1
