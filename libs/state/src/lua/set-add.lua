-- KEYS[1] set. ARGV[1…] members. Answers 1 per member that was new.

      local answers = {}
      for i = 1, #ARGV do answers[i] = redis.call('SADD', KEYS[1], ARGV[i]) end
      return answers
