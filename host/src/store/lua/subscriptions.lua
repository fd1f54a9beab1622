-- Shared by the scripts that change a webhook (prepended to them): the organisation's
-- subscription index has one set per action of the catalogue, holding the active webhooks
-- subscribed to it, and one per source of the organisation, holding those naming it
-- (`subscribed_sources`); publishing reads only the set of its action (or source).

-- A member is the webhook's id, or its id and ` subject` when its deliveries keep their
-- subject's order (`ordering`), so publishing learns that from the set it reads anyway.

-- Puts webhook `wh` (hash at `key`) in the sets of the actions and sources it subscribes to
-- while it is active, and out of every other. `sets` are the keys of every action's and
-- source's set, `actions` their names, in the same order.
local function index_subscriptions(key, wh, sets, actions)
  local f = redis.call('HMGET', key, 'active', 'subscribed_actions', 'ordering', 'subscribed_sources')
  local wanted = {}
  if f[1] == '1' then
    for _, field in ipairs({f[2], f[4]}) do
      if field then
        for _, name in ipairs(cjson.decode(field)) do wanted[name] = true end
      end
    end
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
