package trickster;

import arenabot.Action;
import arenabot.Arena;
import arenabot.Bot;
import arenabot.Turn;
import arenabot.Verb;
import java.util.Comparator;
import java.util.Map;

/**
 * An example Java submission, "java-trickster": it declares the combination that scores most,
 * exchanges the seven of trumps when it may, and otherwise plays its lowest card. Built with the
 * arena's Java starter kit (see build.sh), whose package arenabot is the SDK.
 */
public final class Trickster extends Bot {
    private static final Map<String, Integer> POINTS = Map.ofEntries(
            Map.entry("marriage", 20), Map.entry("royal-marriage", 40),
            Map.entry("bezique", 40), Map.entry("four-knaves", 40),
            Map.entry("carte-blanche", 50), Map.entry("four-queens", 60),
            Map.entry("four-kings", 80), Map.entry("four-aces", 100),
            Map.entry("plain-sequence", 150), Map.entry("sequence", 250),
            Map.entry("double-bezique", 500), Map.entry("triple-bezique", 1500),
            Map.entry("quadruple-bezique", 4500));

    public Trickster() {
        super("java-trickster", "1");
    }

    @Override
    public String decide(Turn turn) {
        var declare = turn.legal(Verb.DECLARE).stream()
                .max(Comparator.comparingInt(a -> POINTS.getOrDefault(a.combination(), 0)));
        if (declare.isPresent()) {
            return declare.get().text();
        }
        var exchange = turn.legal(Verb.EXCHANGE);
        if (!exchange.isEmpty()) {
            return exchange.get(0).text();
        }
        var play = turn.legal(Verb.PLAY).stream()
                .min(Comparator.comparingInt((Action a) -> a.card().order()));
        return play.map(Action::text).orElse(turn.legal().get(0).text());
    }

    public static void main(String[] args) {
        Arena.main(new Trickster(), args);
    }
}
