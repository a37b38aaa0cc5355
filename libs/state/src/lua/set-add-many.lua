-- KEYS[1…] one set per entry, ARGV[1…] the entries' members (the key count comes first).
-- Answers 1 per member that was new to its set.

      local answers = {}
      for i = 1, #KEYS do answers[i] = redis.call('SADD', KEYS[i], ARGV[i]) end
      return answers
