-- Extends the leases of deliveries a live worker holds, so no one else takes them over.
-- A member whose score is its recorded retry time (`q`) is not being attempted any more:
-- it is left as it is, so a renewal racing a recorded retry cannot delay that retry.
-- KEYS: per delivery: 1 its webhook's queue, 2 its row
-- ARGV: 1 lease until (ms), then per delivery: its queue member
-- Returns how many leases were extended.
local renewed = 0
for i = 1, #KEYS, 2 do
  local member = ARGV[1 + (i + 1) / 2]
  local score = redis.call('ZSCORE', KEYS[i], member)
  if score then
    local due = redis.call('HGET', KEYS[i + 1], 'q')
    if not due or due == '' or tonumber(due) ~= tonumber(score) then
      redis.call('ZADD', KEYS[i], ARGV[1], member)
      renewed = renewed + 1
    end
  end
end
return renewed
