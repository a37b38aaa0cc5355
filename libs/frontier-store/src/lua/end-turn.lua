-- Ends a turn (take-turn.lua): the host rests until nextAt.
-- ARGV[4] now, ARGV[5] turn id, ARGV[6] nextAt. Answers 1, or 0 for a turn already ended.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

return endTurn(ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[4]))
