-- KEYS[1] hash. ARGV[1] field, ARGV[2] value, ARGV[3] most fields, ARGV[4] ttl ms. Answers 1 when set, 0 when the hash is full.
-- PTTL answers -1 for a hash without expiry and -2 for none: both are below any ttl, so the expiry is set.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1
