package arenabot;

import arena.v1.Bot.DecisionRequest;
import arena.v1.Bot.Welcome;
import arena.v1.Game.Observation;
import arena.v1.Game.PlayedCard;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One decision to make: the request, its legal actions read into {@link Action}s, the clock, and the
 * game's public log so far. {@link Bot#decide} answers it with one action's text.
 *
 * <p>The clock: a reply within {@link #budgetMs()} costs nothing; a slower one draws on the game's
 * bank ({@link #bankMs()}); none by budget + bank + grace is a timeout. The referee measures from the
 * moment it sends the request: {@link #msLeft()} and {@link #deadlineNanos()} count from the moment
 * the SDK received it, so keep a margin.
 */
public final class Turn {
    private final DecisionRequest request;
    private final List<Action> legal;
    private final Welcome welcome;
    private final List<String> log;
    private final long receivedNanos;
    private final long gameSeed;

    Turn(DecisionRequest request, List<Action> legal, Welcome welcome, List<String> log,
            long receivedNanos, long gameSeed) {
        this.request = request;
        this.legal = Collections.unmodifiableList(legal);
        this.welcome = welcome;
        this.log = Collections.unmodifiableList(new ArrayList<>(log));
        this.receivedNanos = receivedNanos;
        this.gameSeed = gameSeed;
    }

    /** The request as it came (every field of the protocol). */
    public DecisionRequest request() {
        return request;
    }

    /** The request's id, an unsigned 64-bit number held in a long. */
    public long requestId() {
        return request.getRequestId();
    }

    public String matchId() {
        return request.getMatchId();
    }

    /** The game's number in the match, from 0. */
    public int game() {
        return request.getGame();
    }

    public int seat() {
        return request.getSeat();
    }

    /** The seat's view: hand, trick, trump, stock, every seat's public state (game.proto). */
    public Observation observation() {
        return request.getObservation();
    }

    /** The legal actions, in the referee's order (sorted); never empty. */
    public List<Action> legal() {
        return legal;
    }

    /** The legal actions of one verb. */
    public List<Action> legal(Verb verb) {
        List<Action> found = new ArrayList<>();
        for (Action action : legal) {
            if (action.verb() == verb) {
                found.add(action);
            }
        }
        return found;
    }

    /** The match's Welcome (variant, options, time control, seat names), or null if none was seen. */
    public Welcome welcome() {
        return welcome;
    }

    /** The public log entries new since this player's previous request in the game. */
    public List<String> events() {
        return request.getEventsList();
    }

    /** The game's whole public log seen so far, this request's events included. */
    public List<String> log() {
        return log;
    }

    /** The game's seed ({@link GameSeed}), the same for the same deal in every run. */
    public long gameSeed() {
        return gameSeed;
    }

    /** The seat's hand. */
    public List<Card> hand() {
        return cards(observation().getHandList());
    }

    /** The cards of the trick being played, in the order played. */
    public List<Card> trick() {
        List<Card> cards = new ArrayList<>();
        for (PlayedCard played : observation().getTrickList()) {
            cards.add(Card.parse(played.getCard()));
        }
        return cards;
    }

    /** The trump suit ({@code S H D C}), or 0 while there is none (Rubicon, before trumps are fixed). */
    public char trump() {
        String trump = observation().getTrump();
        return trump.isEmpty() ? 0 : trump.charAt(0);
    }

    /** This decision's budget: a reply within it costs nothing. */
    public int budgetMs() {
        return request.getClock().getBudgetMs();
    }

    /** What is left of the game's bank. */
    public int bankMs() {
        return request.getClock().getBankMs();
    }

    /** The transport allowance of the match's time control (0 when no Welcome was seen). */
    public int graceMs() {
        return welcome == null ? 0 : welcome.getTimeControl().getGraceMs();
    }

    /** When the SDK received the request, on {@link System#nanoTime()}'s scale. */
    public long receivedNanos() {
        return receivedNanos;
    }

    /** The end of the free budget, on {@link System#nanoTime()}'s scale: answer before it. */
    public long deadlineNanos() {
        return receivedNanos + budgetMs() * 1_000_000L;
    }

    /**
     * The last moment a reply can count, on {@link System#nanoTime()}'s scale: budget, bank and grace
     * (plus 1 ms, the bank being sent in whole milliseconds). Later, the referee has timed the seat
     * out, and the SDK does not send the reply.
     */
    public long hardDeadlineNanos() {
        return receivedNanos + (budgetMs() + (long) bankMs() + 1 + graceMs()) * 1_000_000L;
    }

    /** Milliseconds left of the free budget (negative once it is spent). */
    public long msLeft() {
        return Math.floorDiv(deadlineNanos() - System.nanoTime(), 1_000_000L);
    }

    static List<Card> cards(List<String> texts) {
        List<Card> cards = new ArrayList<>(texts.size());
        for (String text : texts) {
            cards.add(Card.parse(text));
        }
        return cards;
    }
}
