-- KEYS[1] hash. ARGV[1…] (field, amount) pairs. Adds each amount to its field; answers the fields' values after.

      local after = {}
      for i = 1, #ARGV, 2 do after[#after + 1] = redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
      return after
