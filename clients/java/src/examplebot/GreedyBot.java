package examplebot;

import arena.v1.Game.Observation;
import arenabot.Action;
import arenabot.Arena;
import arenabot.Bot;
import arenabot.Card;
import arenabot.Turn;
import arenabot.Verb;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * The example bot: it declares the best-scoring combination it may (the seven's exchange before a
 * declaration worth no more), keeps its brisques and the cards of combinations it may still make while
 * there is stock, and in the last tricks wins what it can cheaply and leads its sure winners. It looks
 * one decision ahead, like the Python SDK's greedy bot, and reads only the observation and the legal
 * actions, so it plays every variant. When unsure it answers a legal action, never anything else.
 */
public class GreedyBot extends Bot {
    /** Points of each combination (the ordinary rules). */
    static final Map<String, Integer> ORDINARY_SCORES = Map.ofEntries(
            Map.entry("marriage", 20), Map.entry("royal-marriage", 40), Map.entry("sequence", 250),
            Map.entry("bezique", 40), Map.entry("double-bezique", 500), Map.entry("triple-bezique", 1500),
            Map.entry("quadruple-bezique", 4500), Map.entry("four-knaves", 40),
            Map.entry("four-queens", 60), Map.entry("four-kings", 80), Map.entry("four-aces", 100),
            Map.entry("seven-of-trumps", 10));

    /** Rubicon: no seven of trumps; a plain sequence and carte blanche score. */
    static final Map<String, Integer> RUBICON_SCORES;

    static {
        Map<String, Integer> rubicon = new HashMap<>(ORDINARY_SCORES);
        rubicon.remove("seven-of-trumps");
        rubicon.put("plain-sequence", 150);
        rubicon.put("carte-blanche", 50);
        RUBICON_SCORES = Map.copyOf(rubicon);
    }

    private static final int JACK = Card.RANKS.indexOf('J');
    private static final int TEN = Card.RANKS.indexOf('T');
    private static final int PLAIN_TEN = TEN + 10; // the keep value of a ten that is not a trump

    public GreedyBot() {
        super("java-greedy", "1");
    }

    public static void main(String[] args) {
        Arena.main(new GreedyBot(), args);
    }

    @Override
    public String decide(Turn turn) {
        Action choice = null;
        try {
            choice = choose(turn);
        } catch (RuntimeException e) {
            // An unforeseen position: any legal action beats a crash. Said once per decision.
            System.err.println(name() + ": request " + Long.toUnsignedString(turn.requestId())
                    + ": no choice (" + e + "); playing the first legal action");
        }
        return (choice != null ? choice : turn.legal().get(0)).text();
    }

    /** The choice, or null to play the first legal action. */
    Action choose(Turn turn) {
        List<Action> plays = turn.legal(Verb.PLAY);
        if (plays.isEmpty()) {
            return declaring(turn);
        }
        Context ctx = new Context(turn);
        boolean following = turn.observation().getTrickCount() > 0;
        if (ctx.inStock) {
            return following ? stockFollow(turn, ctx, plays) : stockLead(ctx, plays);
        }
        return following ? lastFollow(turn, ctx, plays) : lastLead(turn, ctx, plays);
    }

    // ------------------------------------------------------------------ declaring

    /** The best-scoring declaration first; then the exchange of the seven; then done. */
    static Action declaring(Turn turn) {
        Map<String, Integer> scores = scores(turn.observation().getVariant());
        Action best = null;
        int bestScore = -1;
        for (Action action : turn.legal(Verb.DECLARE)) {
            int score = scores.getOrDefault(action.combination(), 0);
            // On equal points the declaration of fewer cards, which leaves more for the next ones.
            if (best == null || score > bestScore
                    || (score == bestScore && action.cards().size() < best.cards().size())) {
                best = action;
                bestScore = score;
            }
        }
        int seven = scores.getOrDefault("seven-of-trumps", 0);
        if (best != null && bestScore > seven) {
            return best;
        }
        List<Action> exchanges = turn.legal(Verb.EXCHANGE);
        if (!exchanges.isEmpty()) {
            return exchanges.get(0); // as much as declaring the seven, and the turn-up comes to hand
        }
        if (best != null) {
            return best;
        }
        List<Action> done = turn.legal(Verb.DONE);
        return done.isEmpty() ? null : done.get(0);
    }

    static Map<String, Integer> scores(String variant) {
        return variant.equals("rubicon") ? RUBICON_SCORES : ORDINARY_SCORES;
    }

    // ------------------------------------------------------------------ while there is stock

    /**
     * Win a trick holding a brisque if it costs no ace or ten; else throw the cheapest card that is
     * no part of a possible combination.
     */
    Action stockFollow(Turn turn, Context ctx, List<Action> plays) {
        List<Card> trick = turn.trick();
        if (!partnerWins(turn, ctx, trick) && trick.stream().anyMatch(Card::isBrisque)) {
            List<Action> winners = new ArrayList<>();
            for (Action a : plays) {
                Card c = a.card();
                if (beats(c, trick, ctx.trump) && c.order() < TEN && !inCombination(c, ctx)) {
                    winners.add(a);
                }
            }
            if (winners.isEmpty()) { // a low trump of a possible sequence may be worth less than a ten
                for (Action a : plays) {
                    Card c = a.card();
                    if (beats(c, trick, ctx.trump) && c.order() < TEN && keepValue(c, ctx) < PLAIN_TEN) {
                        winners.add(a);
                    }
                }
            }
            if (!winners.isEmpty()) {
                return least(winners, a -> keepValue(a.card(), ctx));
            }
        }
        return spare(ctx, plays);
    }

    /** Lead a low card that is neither a trump nor a brisque nor part of a possible combination. */
    Action stockLead(Context ctx, List<Action> plays) {
        List<Action> low = new ArrayList<>();
        List<Action> plain = new ArrayList<>();
        for (Action a : plays) {
            Card c = a.card();
            if (c.order() < TEN) {
                low.add(a);
                if (c.suit() != ctx.trump && !inCombination(c, ctx)) {
                    plain.add(a);
                }
            }
        }
        List<Action> from = !plain.isEmpty() ? plain : !low.isEmpty() ? low : plays;
        return least(from, a -> keepValue(a.card(), ctx));
    }

    Action spare(Context ctx, List<Action> plays) {
        List<Action> spare = new ArrayList<>();
        for (Action a : plays) {
            if (a.card().order() < TEN && !inCombination(a.card(), ctx)) {
                spare.add(a);
            }
        }
        return least(spare.isEmpty() ? plays : spare, a -> keepValue(a.card(), ctx));
    }

    boolean inCombination(Card card, Context ctx) {
        return combinationValue(card, ctx) > 0;
    }

    /** How much a card may still be worth in a combination (0: nothing). */
    static int combinationValue(Card card, Context ctx) {
        char rank = card.rank();
        char suit = card.suit();
        String kind = card.kind();
        int value = 0;
        if (rank == 'K' || rank == 'Q') {
            String mate = "" + (rank == 'K' ? 'Q' : 'K') + suit;
            value += ctx.hand.contains(mate) ? 4 : 2; // a marriage in hand, or one that may still come
        }
        int bezique = ctx.bezique.indexOf(kind);
        if (bezique >= 0) {
            value += ctx.hand.contains(ctx.bezique.get(1 - bezique)) ? 6 : 3;
        }
        if (suit == ctx.trump && card.order() >= JACK) {
            value += 3; // the trump sequence
        }
        if ("AKQJ".indexOf(rank) >= 0) {
            int same = 0;
            for (String k : ctx.hand) {
                if (k.charAt(0) == rank) {
                    same++;
                }
            }
            if (same >= 2) {
                value += same; // a four of a kind growing
            }
        }
        if (rank == '7' && suit == ctx.trump && ctx.sevenOpen) {
            value += 8;
        }
        if (card.pack() > 0) {
            value = Math.max(0, value - 3); // declared already: it has scored once
        }
        return value;
    }

    /** How much the bot would rather keep a card: rank, brisque, trump, combinations. */
    static int keepValue(Card card, Context ctx) {
        int value = card.order();
        if (card.isBrisque()) {
            value += 10;
        }
        if (card.suit() == ctx.trump) {
            value += 6;
        }
        if (ctx.inStock) {
            value += combinationValue(card, ctx);
        }
        return value;
    }

    // ------------------------------------------------------------------ the last tricks

    /** The cheapest card that wins if one does (unless a partner is winning); else the cheapest. */
    Action lastFollow(Turn turn, Context ctx, List<Action> plays) {
        List<Card> trick = turn.trick();
        Action cheapest = least(plays, a -> keepValue(a.card(), ctx));
        if (partnerWins(turn, ctx, trick)) {
            return cheapest;
        }
        List<Action> winners = new ArrayList<>();
        for (Action a : plays) {
            if (beats(a.card(), trick, ctx.trump)) {
                winners.add(a);
            }
        }
        return winners.isEmpty() ? cheapest : least(winners, a -> keepValue(a.card(), ctx));
    }

    /**
     * A card sure to win (the highest trump left), else one likely to win (the highest card left of a
     * plain suit), else the cheapest card.
     */
    Action lastLead(Turn turn, Context ctx, List<Action> plays) {
        Map<String, Integer> unseen = unseen(turn, ctx);
        List<Action> tops = new ArrayList<>();
        List<Action> sure = new ArrayList<>();
        for (Action a : plays) {
            if (isTop(a.card(), unseen)) {
                tops.add(a);
                if (a.card().suit() == ctx.trump) {
                    sure.add(a);
                }
            }
        }
        if (!sure.isEmpty()) {
            return least(sure, a -> -a.card().order());
        }
        if (!tops.isEmpty()) {
            // the highest; between equals the one the bot would rather lose
            return least(tops, a -> -a.card().order() * 1000 + keepValue(a.card(), ctx));
        }
        return least(plays, a -> keepValue(a.card(), ctx));
    }

    /** Copies of each kind neither in the bot's hand nor played in this deal (read off the log). */
    static Map<String, Integer> unseen(Turn turn, Context ctx) {
        Map<String, Integer> unseen = new HashMap<>();
        for (char suit : Card.SUITS.toCharArray()) {
            for (char rank : Card.RANKS.toCharArray()) {
                unseen.put("" + rank + suit, ctx.packs);
            }
        }
        for (String kind : ctx.hand) {
            unseen.merge(kind, -1, Integer::sum);
        }
        List<String> log = turn.log();
        int from = 0;
        for (int i = log.size() - 1; i >= 0; i--) {
            if (log.get(i).startsWith("deal ")) {
                from = i;
                break;
            }
        }
        for (String entry : log.subList(from, log.size())) {
            String[] words = entry.split(" ");
            if (words.length == 4 && words[2].equals("plays")) {
                try {
                    unseen.merge(Card.parse(words[3]).kind(), -1, Integer::sum);
                } catch (IllegalArgumentException e) {
                    // not a card: an entry of a kind this bot does not read
                }
            }
        }
        return unseen;
    }

    /** No higher card of its suit is left anywhere but in the bot's own hand. */
    static boolean isTop(Card card, Map<String, Integer> unseen) {
        for (int r = card.order() + 1; r < Card.RANKS.length(); r++) {
            if (unseen.getOrDefault("" + Card.RANKS.charAt(r) + card.suit(), 0) > 0) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ tricks

    /** The card winning the trick so far: the highest trump, else the highest of the suit led. */
    static int winningIndex(List<Card> trick, char trump) {
        int best = 0;
        for (int i = 1; i < trick.size(); i++) {
            Card c = trick.get(i);
            Card b = trick.get(best);
            if ((c.suit() == b.suit() && c.order() > b.order()) || (c.suit() != b.suit() && c.suit() == trump)) {
                best = i;
            }
        }
        return best;
    }

    /** Whether playing the card would take the lead of the trick. */
    static boolean beats(Card card, List<Card> trick, char trump) {
        Card b = trick.get(winningIndex(trick, trump));
        if (card.suit() == b.suit()) {
            return card.order() > b.order();
        }
        return card.suit() == trump;
    }

    static boolean partnerWins(Turn turn, Context ctx, List<Card> trick) {
        int winner = turn.observation().getTrick(winningIndex(trick, ctx.trump)).getSeat();
        return ctx.partner >= 0 && winner == ctx.partner;
    }

    private static Action least(List<Action> actions, ToIntFunction<Action> key) {
        Action best = null;
        int bestKey = 0;
        for (Action a : actions) {
            int k = key.applyAsInt(a);
            if (best == null || k < bestKey) {
                best = a;
                bestKey = k;
            }
        }
        return best;
    }

    /** What the bot reads off one observation. */
    static final class Context {
        final char trump; // 0: none yet (Rubicon)
        final boolean inStock;
        final List<String> hand = new ArrayList<>(); // the kinds in hand, one per card
        final List<String> bezique; // the two cards of a bezique
        final boolean sevenOpen; // the seven of trumps can still be exchanged or declared
        final int packs;
        final int partner; // -1: none

        Context(Turn turn) {
            Observation obs = turn.observation();
            String variant = obs.getVariant();
            trump = turn.trump();
            inStock = obs.getStockSize() > 0;
            for (Card card : turn.hand()) {
                hand.add(card.kind());
            }
            boolean swapped = "trump-dependent".equals(obs.getOptionsOrDefault("bezique_cards", "fixed"))
                    && (trump == 'S' || trump == 'D');
            bezique = swapped ? List.of("QC", "JH") : List.of("QS", "JD");
            sevenOpen = !variant.equals("rubicon") && !obs.getTurnUp().isEmpty();
            packs = switch (variant) {
                case "two-handed", "polish", "three-handed-consultation", "four-handed-consultation" -> 2;
                case "three-handed" -> 3;
                default -> 4; // four-handed, four-handed-partners, rubicon; more is the safe guess
            };
            partner = variant.equals("four-handed-partners") ? (turn.seat() + 2) % 4 : -1;
        }
    }
}
