-- KEYS[1] list. ARGV[1] the expected head. Answers 1 when it was the head and is gone, else 0.

      if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then
        redis.call('LPOP', KEYS[1])
        return 1
      end
      return 0
