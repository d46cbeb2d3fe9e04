package arenabot;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A game's seed for a bot's random numbers, the same number the Python and JavaScript SDKs compute: the
 * first 8 bytes (big-endian) of the SHA-256 of
 * {@code arena-game-seed/1|VARIANT|SEAT|GAME|DEALER|TURN_UP|HAND}, read from the bot's first request
 * of the game, cards without their pack numbers and the hand sorted. It depends only on the deal, so
 * a bot that draws its randomness from it plays the same deal the same way in every run.
 */
public final class GameSeed {
    public static final String VERSION = "arena-game-seed/1";

    private GameSeed() {}

    /** The text the seed hashes. */
    public static String text(String variant, int seat, int game, int dealer, String turnUp,
            Collection<String> hand) {
        List<String> kinds = new ArrayList<>(hand.size());
        for (String card : hand) {
            kinds.add(kindOf(card));
        }
        kinds.sort(null); // the kinds are ASCII: String order is byte order
        return VERSION + "|" + variant + "|" + seat + "|" + game + "|" + dealer + "|"
                + kindOf(turnUp) + "|" + String.join(" ", kinds);
    }

    /** The seed, an unsigned 64-bit number held in a long (print it with Long.toUnsignedString). */
    public static long seed(String variant, int seat, int game, int dealer, String turnUp,
            Collection<String> hand) {
        byte[] bytes = text(variant, seat, game, dealer, turnUp, hand).getBytes(StandardCharsets.UTF_8);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
            return ByteBuffer.wrap(digest, 0, 8).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this Java has no SHA-256", e);
        }
    }

    /** The seed of a game from the bot's first request in it. */
    public static long of(arena.v1.Bot.DecisionRequest request) {
        arena.v1.Game.Observation obs = request.getObservation();
        return seed(obs.getVariant(), request.getSeat(), request.getGame(), obs.getDealer(),
                obs.getTurnUp(), obs.getHandList());
    }

    private static String kindOf(String card) {
        int dot = card.indexOf('.');
        return dot < 0 ? card : card.substring(0, dot);
    }
}
