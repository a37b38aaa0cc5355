-- KEYS[1] set. ARGV[1] member. Answers the members left.

      redis.call('SREM', KEYS[1], ARGV[1])
      return redis.call('SCARD', KEYS[1])
