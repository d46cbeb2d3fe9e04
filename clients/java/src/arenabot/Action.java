package arenabot;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * One legal action of a decision request, read from the protocol's {@code Action} message: its exact
 * {@link #text()} (the reply: send it back as it came), its {@link #verb()}, the {@link #combination()}
 * of a declaration and its {@link #cards()}.
 *
 * <p>A verb this SDK does not know (one the referee may add) is passed through: {@link Verb#OTHER},
 * with its word in {@link #verbWord()} and the words after it in {@link #cardTexts()}; answering such
 * an action by its text is always right.
 */
public final class Action {
    /** The combination names of game.proto's {@code Combination} values 1 to 14, as in action texts. */
    static final List<String> COMBINATIONS = List.of(
            "marriage", "royal-marriage", "plain-sequence", "sequence", "bezique", "double-bezique",
            "triple-bezique", "quadruple-bezique", "four-knaves", "four-queens", "four-kings",
            "four-aces", "seven-of-trumps", "carte-blanche");

    private final String text;
    private final Verb verb;
    private final String verbWord;
    private final String combination;
    private final List<Card> cards;
    private final List<String> cardTexts;

    private Action(String text, Verb verb, String verbWord, String combination, List<Card> cards,
            List<String> cardTexts) {
        this.text = text;
        this.verb = verb;
        this.verbWord = verbWord;
        this.combination = combination;
        this.cards = cards;
        this.cardTexts = cardTexts;
    }

    /**
     * Reads a legal action from its message. The structured fields are used where they are set; the
     * text fills in what they leave out (a verb number this SDK does not know, cards not listed).
     *
     * @throws IllegalArgumentException naming what is wrong: no text, cards that are not cards (for
     *     a known verb), a verb or combination that contradicts the text, a play without its card
     */
    public static Action fromWire(arena.v1.Game.Action pb) {
        String text = pb.getText();
        String[] words = text.trim().split("\\s+");
        if (text.isBlank()) {
            throw new IllegalArgumentException("an action with no text");
        }
        String word = words[0].toLowerCase(Locale.ROOT);
        Verb fromText = Verb.ofWord(word);
        Verb verb = Verb.ofWire(pb.getVerbValue());
        if (verb == null || fromText == Verb.OTHER) {
            // 0 (not set), a number added after this SDK, or a word it does not know: the text says,
            // and an unknown word passes through as OTHER whatever number came with it.
            verb = fromText;
        } else if (verb != fromText) {
            throw new IllegalArgumentException(
                    "action \"" + text + "\" has verb " + pb.getVerb() + " but its text says " + words[0]);
        }
        String combination = null;
        int firstCard = 1;
        if (verb == Verb.DECLARE) {
            if (words.length < 2) {
                throw new IllegalArgumentException("action \"" + text + "\" declares no combination");
            }
            combination = words[1].toLowerCase(Locale.ROOT).replace('_', '-');
            int number = pb.getCombinationValue();
            if (number >= 1 && number <= COMBINATIONS.size()
                    && !COMBINATIONS.get(number - 1).equals(combination)) {
                throw new IllegalArgumentException("action \"" + text + "\" has combination "
                        + pb.getCombination() + " but its text says " + words[1]);
            }
            firstCard = 2;
        }
        List<String> texts = new ArrayList<>(pb.getCardsList());
        if (texts.isEmpty()) {
            for (int i = firstCard; i < words.length; i++) {
                texts.add(words[i]);
            }
        }
        List<Card> cards = new ArrayList<>(texts.size());
        for (String card : texts) {
            try {
                cards.add(Card.parse(card));
            } catch (IllegalArgumentException e) {
                if (verb != Verb.OTHER) {
                    throw new IllegalArgumentException("action \"" + text + "\": " + e.getMessage());
                }
                // An unknown verb's words need not be cards: they stay in cardTexts.
            }
        }
        if ((verb == Verb.PLAY || verb == Verb.EXCHANGE) && cards.size() != 1) {
            throw new IllegalArgumentException(
                    "action \"" + text + "\" must name one card, not " + cards.size());
        }
        return new Action(text, verb, word, combination, Collections.unmodifiableList(cards),
                Collections.unmodifiableList(texts));
    }

    /** The exact text form, the only thing the referee reads in a reply. */
    public String text() {
        return text;
    }

    public Verb verb() {
        return verb;
    }

    /** The first word of the text, lower-cased: {@code play}, or a verb unknown to this SDK. */
    public String verbWord() {
        return verbWord;
    }

    /** A declaration's combination as in the text ({@code royal-marriage}); null for other verbs. */
    public String combination() {
        return combination;
    }

    /** The cards the action names: the one played or exchanged, a declaration's cards. */
    public List<Card> cards() {
        return cards;
    }

    /** The card references as they came (for an unknown verb, the words after the verb). */
    public List<String> cardTexts() {
        return cardTexts;
    }

    /** The card of a play or an exchange. */
    public Card card() {
        if (cards.isEmpty()) {
            throw new IllegalStateException("action \"" + text + "\" names no card");
        }
        return cards.get(0);
    }

    @Override
    public String toString() {
        return text;
    }
}
