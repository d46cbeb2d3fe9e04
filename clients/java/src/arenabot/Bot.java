package arenabot;

import arena.v1.Bot.GameOver;
import arena.v1.Bot.MatchOver;
import arena.v1.Bot.Welcome;
import java.util.SplittableRandom;

/**
 * A bot: override {@link #decide}; the other hooks are optional. {@link Arena#main} plays it.
 */
public abstract class Bot {
    private final String name;
    private final String version;
    /** Reseeded from each game's seed before its first decision (see {@link #onGameStart}). */
    protected SplittableRandom random = new SplittableRandom(0);

    protected Bot(String name, String version) {
        this.name = name;
        this.version = version;
    }

    /** The bot's name, sent in its Hello and recorded with the match. */
    public final String name() {
        return name;
    }

    public final String version() {
        return version;
    }

    /**
     * Chooses one action: return the {@link Action#text()} of one of {@code turn.legal()}, exactly as
     * it came.
     */
    public abstract String decide(Turn turn) throws Exception;

    /** A match starts: its id, seat, variant, options, time control, policies, seat names. */
    public void onWelcome(Welcome welcome) throws Exception {}

    /**
     * A game starts for this bot, before its first decision in the game. By default it reseeds
     * {@link #random} with the game's seed; override it (calling this or not) to seed your own.
     */
    public void onGameStart(GameStart start) throws Exception {
        random = new SplittableRandom(start.seed());
    }

    /** A game has ended: its result (outcome, scores, ranking). */
    public void onGameOver(GameOver gameOver) throws Exception {}

    /** A match has ended: every game's result and the match points per seat. */
    public void onMatchOver(MatchOver matchOver) throws Exception {}
}
