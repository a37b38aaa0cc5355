-- KEYS[1] list, KEYS[2] its active flag. ARGV[1] front ('1' or '0'), ARGV[2…] items (front items keep their
-- order at the head). Answers 1 when it set the flag, else 0.

      if ARGV[1] == '1' then
        for i = #ARGV, 2, -1 do redis.call('LPUSH', KEYS[1], ARGV[i]) end
      else
        for i = 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
      end
      if redis.call('SET', KEYS[2], '1', 'NX') then return 1 end
      return 0
