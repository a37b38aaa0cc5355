-- KEYS[1] hash. ARGV[1] field, ARGV[2] value. Answers nil when set now, else the value already there.

      if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then return false end
      return redis.call('HGET', KEYS[1], ARGV[1])
