-- Answers {size, scheduled, free back queues, init (0/1), hosts due, leased, front queue lengths…}.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local answer = {
  num(redis.call('GET', P..'size'), 0),
  redis.call('ZCARD', P..'recrawl'),
  redis.call('LLEN', P..'free'),
  redis.call('EXISTS', P..'init'),
  redis.call('ZCARD', P..'heap'),
  redis.call('ZCARD', P..'leases'),
}
-- The front queues are measured only when fq (kept exact by every script that pushes or pops them) says they
-- hold entries: with fewer hosts than back queues they are empty, and on a cluster's 64 shards their 8 LLENs
-- each were most of what a reading cost.
local empty = redis.call('GET', P..'fq') == '0'
for i = 0, CFG.n - 1 do answer[#answer + 1] = empty and 0 or redis.call('LLEN', P..'f:'..i) end
return answer
