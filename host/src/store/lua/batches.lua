-- Members gathered per key, in the order keys were first seen, then sent with one variadic
-- command per key (in chunks of 4000, under Lua's unpack limit). Shared by scripts that
-- change many keys per call (publish, recording outcomes).
local function batches()
  local by_key, order = {}, {}
  local b = {}
  function b.add(key, member)
    local members = by_key[key]
    if not members then
      members = {}
      by_key[key] = members
      order[#order + 1] = key
    end
    members[#members + 1] = member
  end
  function b.send(command)
    for _, key in ipairs(order) do
      local members = by_key[key]
      for i = 1, #members, 4000 do
        redis.call(command, key, unpack(members, i, math.min(i + 3999, #members)))
      end
    end
  end
  return b
end
