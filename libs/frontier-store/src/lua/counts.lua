-- Answers {leased, fetched}: what every dispatcher round reads.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

return { redis.call('ZCARD', P..'leases'), num(redis.call('GET', P..'fetched'), 0) }
