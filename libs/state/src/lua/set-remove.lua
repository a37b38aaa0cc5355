-- KEYS[1] set. ARGV[1…] members. Answers the members left.

      redis.call('SREM', KEYS[1], unpack(ARGV))
      return redis.call('SCARD', KEYS[1])
