-- Shared by the scripts that change a webhook (prepended to them): the organisation's
-- subscription index has one set per action of the catalogue, holding the active webhooks
-- subscribed to it; publishing reads only the set of its action.

-- A member is the webhook's id, or its id and ` subject` when its deliveries keep their
-- subject's order (`ordering`), so publishing learns that from the set it reads anyway.

-- Puts webhook `wh` (hash at `key`) in the sets of the actions it subscribes to while it is
-- active, and out of every other. `sets` are the keys of every action's set, `actions` the
-- actions' names, in the same order.
local function index_subscriptions(key, wh, sets, actions)
  local f = redis.call('HMGET', key, 'active', 'subscribed_actions', 'ordering')
  local wanted = {}
  if f[1] == '1' and f[2] then
    for _, action in ipairs(cjson.decode(f[2])) do wanted[action] = true end
  end
  local ordered = wh .. ' subject'
  local member, other = wh, ordered
  if f[3] == 'subject' then member, other = ordered, wh end
  for i, set in ipairs(sets) do
    redis.call('SREM', set, other)
    if wanted[actions[i]] then
      redis.call('SADD', set, member)
    else
      redis.call('SREM', set, member)
    end
  end
end
