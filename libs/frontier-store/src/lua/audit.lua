-- Appends to hosts' audit logs.
-- ARGV[5…] per host: the host, its number of entries n, then the n entries.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local i = 5
while i <= #ARGV do
  local n = tonumber(ARGV[i + 1])
  if n > 0 then appendAudit(ARGV[i], { unpack(ARGV, i + 2, i + 1 + n) }) end
  i = i + 2 + n
end
return 0
