-- Shared by the scripts that claim work (prepended to them): queues are sorted sets whose
-- score is when a member is due; claiming a member moves its score to the end of its lease,
-- so it is claimed by no one else until then, and taken over by anyone after it (its worker
-- died). Finishing the work removes the member.

-- Claims up to `n` members of `queue` due at `now`, leasing them until `lease_until`.
local function take(queue, now, lease_until, n)
  if n <= 0 then return {} end
  local due = redis.call('ZRANGE', queue, '-inf', now, 'BYSCORE', 'LIMIT', '0', n)
  if #due > 0 then
    local args = {}
    for i, member in ipairs(due) do
      args[2 * i - 1] = lease_until
      args[2 * i] = member
    end
    redis.call('ZADD', queue, 'XX', unpack(args))
  end
  return due
end
