package arenabot;

/**
 * A game starts for this bot: its first decision in the game is about to be asked.
 *
 * @param seed the game's seed ({@link GameSeed}), unsigned 64 bits in a long
 * @param request the first request of the game (its observation is the bot's first view)
 */
public record GameStart(String matchId, int game, int seat, long seed,
        arena.v1.Bot.DecisionRequest request) {}
