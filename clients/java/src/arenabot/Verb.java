package arenabot;

import java.util.Locale;

/**
 * What an action does, read from its first word. {@link #OTHER} is any verb this SDK does not know
 * (one the referee may add later): {@link Action#verbWord()} then says which, and the action can
 * still be answered by its text.
 */
public enum Verb {
    PLAY("play"),
    DECLARE("declare"),
    EXCHANGE("exchange"),
    DONE("done"),
    OTHER("");

    private final String word;

    Verb(String word) {
        this.word = word;
    }

    /** The verb's word in an action's text ({@code "play"}); empty for {@link #OTHER}. */
    public String word() {
        return word;
    }

    /** The verb of a word, {@link #OTHER} for one it does not know. */
    public static Verb ofWord(String word) {
        String lower = word.toLowerCase(Locale.ROOT);
        for (Verb verb : values()) {
            if (verb != OTHER && verb.word.equals(lower)) {
                return verb;
            }
        }
        return OTHER;
    }

    /** The verb of the protocol's enum value (game.proto's {@code Verb}), null for 0 or one unknown. */
    static Verb ofWire(int number) {
        return switch (number) {
            case 1 -> PLAY;
            case 2 -> DECLARE;
            case 3 -> EXCHANGE;
            case 4 -> DONE;
            default -> null;
        };
    }
}
