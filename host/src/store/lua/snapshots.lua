-- A record's snapshot pointer (`store::events::exports::Pointer`): '<event time, ms> <event
-- id>', the value of its field ('Type:id') in its organisation's snapshots hash; with history
-- in PostgreSQL a deletion leaves '<event time, ms>d <event id>' instead of nothing (a
-- tombstone: it moves to PostgreSQL with its event and hides the older pointers there).
-- Shared by the scripts that read one (publish, forgetting after a deletion elsewhere).
-- Returns the event time (a number), the event id and whether it is a tombstone, or nil for
-- a value that is no pointer.
local function snapshot_pointer(value)
  local space = string.find(value, ' ', 1, true)
  if not space then return nil end
  local ms, gone = string.sub(value, 1, space - 1), false
  if string.sub(ms, -1) == 'd' then ms, gone = string.sub(ms, 1, -2), true end
  return tonumber(ms), string.sub(value, space + 1), gone
end
