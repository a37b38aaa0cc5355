-- KEYS[1…] sets (the key count comes first). Answers each set's members.

      local answers = {}
      for i = 1, #KEYS do answers[i] = redis.call('SMEMBERS', KEYS[i]) end
      return answers
