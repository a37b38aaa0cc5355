-- Ends a lease with its outcome.
-- ARGV[4] now, ARGV[5] lease id, ARGV[6] nextAt, ARGV[7] requeue item or '', ARGV[8] ip or '',
-- ARGV[9] '1' if fetched, ARGV[10] politeness JSON or '', ARGV[11] retry-later item or '', ARGV[12] its front
-- queue, ARGV[13] its due time, ARGV[14] the host's registrable domain or '', ARGV[15] the address's range rule
-- ('' | 'cdn' | 'strict'), ARGV[16] the host's own in-flight limit ('' = as it was, '0' = the crawl's, n),
-- ARGV[17…] entries for the host's audit log. Answers 1, or 0 for an unknown lease, with
-- the heap's earliest due time (withDueAt).
-- A retry-later item joins the recrawl set (promote.lua) under the lease's own host. (The tabs in the ZADD
-- member below are literal tabs.)
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local done = finish(ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9], ARGV[10], tonumber(ARGV[4]), ARGV[14], ARGV[15], ARGV[16])
if done == 1 and ARGV[7] == '' and ARGV[11] ~= '' then
  redis.call('ZADD', P..'recrawl', tonumber(ARGV[13]), ARGV[12]..'	'..finishedHost..'	'..ARGV[11])
end
if done == 1 and #ARGV >= 17 then appendAudit(finishedHost, { unpack(ARGV, 17) }) end
return withDueAt(done)
