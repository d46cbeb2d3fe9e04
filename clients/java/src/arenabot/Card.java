package arenabot;

/**
 * A card reference as the referee writes it: a rank {@code 7 8 9 J Q K T A} and a suit {@code S H D C},
 * and for a public card the pack of its physical copy ({@code QS.2}); {@code pack} is 0 for a copy the
 * seat holds undeclared ({@code QS}), and such copies of one kind are interchangeable.
 */
public record Card(char rank, char suit, int pack) {
    /** The ranks from the lowest to the highest in a trick; {@link #order()} is the index here. */
    public static final String RANKS = "789JQKTA";

    public static final String SUITS = "SHDC";

    public Card {
        if (RANKS.indexOf(rank) < 0 || SUITS.indexOf(suit) < 0 || pack < 0) {
            throw new IllegalArgumentException(
                    "not a card: rank " + rank + ", suit " + suit + ", pack " + pack);
        }
    }

    /**
     * Parses {@code QS}, {@code TD}, {@code 7H} or {@code QS.2}; anything else is refused with a message
     * quoting the text.
     */
    public static Card parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("not a card: null");
        }
        String problem = null;
        int pack = 0;
        if (text.length() < 2 || RANKS.indexOf(text.charAt(0)) < 0 || SUITS.indexOf(text.charAt(1)) < 0) {
            problem = "a card is a rank 7 8 9 J Q K T A and a suit S H D C";
        } else if (text.length() > 2) {
            String rest = text.substring(2);
            if (!rest.matches("\\.[1-9][0-9]{0,2}")) {
                problem = "a pack number is a dot and a number from 1, as in QS.2";
            } else {
                pack = Integer.parseInt(rest.substring(1));
            }
        }
        if (problem != null) {
            throw new IllegalArgumentException("\"" + text + "\" is not a card (" + problem + ")");
        }
        return new Card(text.charAt(0), text.charAt(1), pack);
    }

    /** The card's strength in a trick of its suit: 0 for a seven up to 7 for an ace. */
    public int order() {
        return RANKS.indexOf(rank);
    }

    /** The kind without the pack: {@code QS.2} is {@code QS}. */
    public String kind() {
        return "" + rank + suit;
    }

    /** An ace or a ten: a brisque, worth 10 points to the seat that wins it. */
    public boolean isBrisque() {
        return rank == 'A' || rank == 'T';
    }

    /** The exact text form: {@code QS} or {@code QS.2}. */
    public String text() {
        return pack == 0 ? kind() : kind() + "." + pack;
    }

    @Override
    public String toString() {
        return text();
    }
}
