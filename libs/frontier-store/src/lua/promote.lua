-- Moves due recrawls (zset `recrawl`, "priority<TAB>host<TAB>item") into their front queues.
-- ARGV[4] now, ARGV[5] max. Answers how many. (The tab in the string.find below is a literal tab.)
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local due = redis.call('ZRANGEBYSCORE', P..'recrawl', '-inf', now, 'LIMIT', 0, tonumber(ARGV[5]))
if #due > 0 then redis.call('SET', P..'fq', frontCount() + #due) end
for _, member in ipairs(due) do
  redis.call('ZREM', P..'recrawl', member)
  local tab = string.find(member, '	', 1, true)
  redis.call('RPUSH', P..'f:'..string.sub(member, 1, tab - 1), string.sub(member, tab + 1))
end
if #due > 0 then
  redis.call('INCRBY', P..'size', #due)
  route(now)
end
return #due
