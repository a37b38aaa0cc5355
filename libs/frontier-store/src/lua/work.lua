-- Answers {size, scheduled, leased}: the URLs still to do, what a completion check reads (not the whole of stats).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

return { num(redis.call('GET', P..'size'), 0), redis.call('ZCARD', P..'recrawl'), redis.call('ZCARD', P..'leases') }
