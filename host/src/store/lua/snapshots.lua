-- A record's snapshot pointer (`store::events::exports`): '<event time, ms> <event id>', the
-- value of its field ('Type:id') in its organisation's snapshots hash. Shared by the scripts
-- that read one (publish, forgetting after a deletion elsewhere).
-- Returns the event time (a number) and the event id, or nil for a value that is no pointer.
local function snapshot_pointer(value)
  local space = string.find(value, ' ', 1, true)
  if not space then return nil end
  return tonumber(string.sub(value, 1, space - 1)), string.sub(value, space + 1)
end
