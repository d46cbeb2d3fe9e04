package arenabot;

import arena.v1.Bot.DecisionRequest;
import arena.v1.Game.Observation;
import arena.v1.Game.PlayedCard;
import examplebot.GreedyBot;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The SDK's own checks, run by {@code make test}: cards, actions (unknown verbs included), the game's
 * seed, the options, and a few choices of the example bot. Ends with the line "N passed, N failed".
 */
public final class SelfTest {
    private static int passed;
    private static final List<String> FAILED = new ArrayList<>();

    private interface Check {
        void run() throws Exception;
    }

    private static void check(String name, Check check) {
        try {
            check.run();
            passed++;
        } catch (Throwable e) {
            FAILED.add(name + ": " + e);
        }
    }

    private static void expect(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    private static void equal(Object expected, Object actual) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new AssertionError("expected <" + expected + ">, got <" + actual + ">");
        }
    }

    private static String refused(Check check) throws Exception {
        try {
            check.run();
        } catch (IllegalArgumentException | ArenaException e) {
            return e.getMessage();
        }
        throw new AssertionError("accepted what it should refuse");
    }

    private static arena.v1.Game.Action.Builder wire(String text) {
        return arena.v1.Game.Action.newBuilder().setText(text);
    }

    public static void main(String[] args) {
        cards();
        actions();
        seed();
        options();
        greedy();
        for (String failure : FAILED) {
            System.out.println("FAILED " + failure);
        }
        System.out.println(passed + " passed, " + FAILED.size() + " failed");
        System.exit(FAILED.isEmpty() ? 0 : 1);
    }

    static void cards() {
        check("a hidden copy", () -> {
            Card c = Card.parse("QS");
            equal('Q', c.rank());
            equal('S', c.suit());
            equal(0, c.pack());
            equal("QS", c.text());
        });
        check("a public copy keeps its pack", () -> {
            Card c = Card.parse("TD.12");
            equal(12, c.pack());
            equal("TD", c.kind());
            equal("TD.12", c.text());
            expect(c.isBrisque(), "a ten is a brisque");
        });
        check("ranks in trick order", () -> {
            equal(0, Card.parse("7H").order());
            equal(6, Card.parse("TH").order());
            equal(7, Card.parse("AH").order());
            expect(Card.parse("KH").order() < Card.parse("TH").order(), "a ten beats a king");
        });
        for (String bad : new String[] {"", "Q", "XS", "QX", "qs", "QS.", "QS.0", "QS.x", "QSS", "QS.1.2"}) {
            check("not a card: '" + bad + "'", () -> {
                String message = refused(() -> Card.parse(bad));
                expect(message.contains("\"" + bad + "\""), "the message quotes the text: " + message);
            });
        }
    }

    static void actions() {
        check("a play from its fields", () -> {
            Action a = Action.fromWire(wire("play QS").setVerbValue(1).addCards("QS").build());
            equal(Verb.PLAY, a.verb());
            equal("play QS", a.text());
            equal(Card.parse("QS"), a.card());
            equal(null, a.combination());
        });
        check("a declaration from its fields", () -> {
            Action a = Action.fromWire(wire("declare royal-marriage KH QH.1").setVerbValue(2)
                    .setCombinationValue(2).addCards("KH").addCards("QH.1").build());
            equal(Verb.DECLARE, a.verb());
            equal("royal-marriage", a.combination());
            equal(List.of(Card.parse("KH"), Card.parse("QH.1")), a.cards());
        });
        check("a declaration from its text alone", () -> {
            Action a = Action.fromWire(wire("declare sequence AH TH KH QH JH").build());
            equal(Verb.DECLARE, a.verb());
            equal("sequence", a.combination());
            equal(5, a.cards().size());
            equal("JH", a.cards().get(4).text());
        });
        check("carte blanche names no card", () -> {
            Action a = Action.fromWire(wire("declare carte-blanche").setVerbValue(2).setCombinationValue(14).build());
            equal("carte-blanche", a.combination());
            expect(a.cards().isEmpty(), "no cards");
        });
        check("the seven's exchange", () -> {
            Action a = Action.fromWire(wire("exchange 7H").setVerbValue(3).addCards("7H").build());
            equal(Verb.EXCHANGE, a.verb());
            equal("7H", a.card().text());
        });
        check("done", () -> {
            Action a = Action.fromWire(wire("done").setVerbValue(4).build());
            equal(Verb.DONE, a.verb());
            expect(a.cards().isEmpty(), "no cards");
        });
        check("an unknown verb number passes through with its word", () -> {
            Action a = Action.fromWire(wire("inquire").setVerbValue(5).build());
            equal(Verb.OTHER, a.verb());
            equal("inquire", a.verbWord());
            equal("inquire", a.text());
            expect(a.cards().isEmpty(), "no cards");
        });
        check("an unknown word passes through whatever verb number came with it", () -> {
            Action a = Action.fromWire(wire("inquire KS").setVerbValue(2).build());
            equal(Verb.OTHER, a.verb());
            equal("inquire", a.verbWord());
            equal(null, a.combination());
        });
        check("an unknown verb's words need not be cards", () -> {
            Action a = Action.fromWire(wire("inquire partner KS").build());
            equal(Verb.OTHER, a.verb());
            equal(List.of("partner", "KS"), a.cardTexts());
            equal(List.of(Card.parse("KS")), a.cards());
        });
        check("a combination added later passes through by its text", () -> {
            Action a = Action.fromWire(wire("declare grand-slam AS").setVerbValue(2).setCombinationValue(15).build());
            equal("grand-slam", a.combination());
        });
        check("a play of no card is refused", () -> {
            String m = refused(() -> Action.fromWire(wire("play XZ").setVerbValue(1).build()));
            expect(m.contains("\"XZ\" is not a card") && m.contains("play XZ"), m);
        });
        check("a blank action is refused", () -> {
            String m = refused(() -> Action.fromWire(wire("  ").build()));
            expect(m.contains("no text"), m);
        });
        check("a verb that contradicts the text is refused", () -> {
            String m = refused(() -> Action.fromWire(wire("declare marriage KH QH").setVerbValue(1).build()));
            expect(m.contains("VERB_PLAY") && m.contains("declare"), m);
        });
        check("a combination that contradicts the text is refused", () -> {
            String m = refused(() -> Action.fromWire(
                    wire("declare marriage KH QH").setVerbValue(2).setCombinationValue(2).build()));
            expect(m.contains("COMBINATION_ROYAL_MARRIAGE"), m);
        });
        check("a play of two cards is refused", () -> {
            String m = refused(() -> Action.fromWire(wire("play QS KS").setVerbValue(1).build()));
            expect(m.contains("one card"), m);
        });
    }

    static void seed() {
        List<String> hand = List.of("QS", "TS", "7C", "QS.2");
        check("the seed's text", () -> equal("arena-game-seed/1|two-handed|0|0|1|AD|7C QS QS TS",
                GameSeed.text("two-handed", 0, 0, 1, "AD.1", hand)));
        check("the seed, as clients/README.md gives it", () -> equal("713393136448822412",
                Long.toUnsignedString(GameSeed.seed("two-handed", 0, 0, 1, "AD.1", hand))));
        check("no turn-up: an empty field", () -> equal("arena-game-seed/1|rubicon|1|2|0||QS",
                GameSeed.text("rubicon", 1, 2, 0, "", List.of("QS"))));
    }

    static void options() {
        Map<String, String> env = Map.of("ARENA_ADDRESS", "unix:/run/arena/referee.sock", "ARENA_TOKEN", "t0");
        check("from the environment", () -> {
            Arena.Options o = Arena.parseArgs(new String[0], env);
            equal("unix:/run/arena/referee.sock", o.address());
            equal("t0", o.token());
        });
        check("the command line wins", () -> {
            Arena.Options o = Arena.parseArgs(new String[] {"--address", "127.0.0.1:5", "--token=t1"}, env);
            equal("127.0.0.1:5", o.address());
            equal("t1", o.token());
        });
        check("an empty value is not given", () -> {
            equal("t0", Arena.parseArgs(new String[] {"--token="}, env).token());
        });
        check("an unknown argument is a usage error", () -> {
            try {
                Arena.parseArgs(new String[] {"--adress", "x"}, env);
                throw new AssertionError("accepted");
            } catch (ArenaException e) {
                equal(ArenaException.EXIT_USAGE, e.exitCode());
                expect(e.getMessage().contains("\"--adress\""), e.getMessage());
            }
        });
        check("an option without its value", () -> {
            String m = refused(() -> Arena.parseArgs(new String[] {"--token"}, env));
            equal("--token needs a value", m);
        });
        check("no address: status 2 and one line", () -> {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = Arena.exitStatus(new GreedyBot(), new String[0], Map.of("ARENA_TOKEN", "t"),
                    new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8));
            equal(2, status);
            equal("java-greedy: no referee address: pass --address HOST:PORT or set ARENA_ADDRESS\n",
                    err.toString(StandardCharsets.UTF_8));
        });
        check("--help: status 0", () -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int status = Arena.exitStatus(new GreedyBot(), new String[] {"--help"}, Map.of(),
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream()));
            equal(0, status);
            expect(out.toString(StandardCharsets.UTF_8).startsWith("usage: bot "), "usage printed");
        });
    }

    /** A turn of a two-handed game: the seat's hand, the trick so far, the trump and the legal actions. */
    private static Turn turn(String variant, List<String> hand, List<String> trick, String trump, int stock,
            String... legal) {
        Observation.Builder obs = Observation.newBuilder().setVariant(variant).setSeat(0).setTrump(trump)
                .setStockSize(stock).setTurnUp(stock > 0 ? "9" + trump + ".1" : "").addAllHand(hand);
        for (int i = 0; i < trick.size(); i++) {
            obs.addTrick(PlayedCard.newBuilder().setSeat(1 + i).setCard(trick.get(i)));
        }
        DecisionRequest.Builder request = DecisionRequest.newBuilder().setRequestId(7).setMatchId("m")
                .setObservation(obs);
        List<Action> actions = new ArrayList<>();
        for (String text : legal) {
            arena.v1.Game.Action pb = wire(text).build();
            request.addLegalActions(pb);
            actions.add(Action.fromWire(pb));
        }
        return new Turn(request.build(), actions, null, List.of(), System.nanoTime(), 0);
    }

    static void greedy() {
        GreedyBot bot = new GreedyBot();
        check("the best declaration", () -> equal("declare bezique QS JD", bot.decide(turn("two-handed",
                List.of("QS", "JD", "KH", "QH", "7C"), List.of(), "C", 20,
                "declare bezique QS JD", "declare marriage KH QH", "declare seven-of-trumps 7C", "done",
                "exchange 7C"))));
        check("the exchange before the seven's declaration", () -> equal("exchange 7C", bot.decide(
                turn("two-handed", List.of("7C", "8H"), List.of(), "C", 20,
                        "declare seven-of-trumps 7C", "done", "exchange 7C"))));
        check("done when nothing scores", () -> equal("done", bot.decide(
                turn("two-handed", List.of("7C", "8H"), List.of(), "C", 20, "done", "inquire"))));
        check("carte blanche in Rubicon", () -> equal("declare carte-blanche", bot.decide(
                turn("rubicon", List.of("7C", "8H"), List.of(), "", 0, "declare carte-blanche", "done"))));
        check("an unknown verb alone is answered", () -> equal("inquire", bot.decide(
                turn("four-handed-partners", List.of("7C"), List.of(), "C", 20, "inquire"))));
        check("with stock, a low plain card is led", () -> equal("play 8H", bot.decide(
                turn("two-handed", List.of("AS", "8H", "KC", "QS"), List.of(), "C", 20,
                        "play AS", "play 8H", "play KC", "play QS"))));
        check("with stock, a ten led is taken by a low trump", () -> equal("play 8C", bot.decide(
                turn("two-handed", List.of("AD", "8H", "8C"), List.of("TD"), "C", 20,
                        "play AD", "play 8H", "play 8C"))));
        check("with stock, no ace is spent on a ten", () -> equal("play 8H", bot.decide(
                turn("two-handed", List.of("AD", "8H", "9S"), List.of("TD"), "C", 20,
                        "play AD", "play 8H", "play 9S"))));
        check("last tricks: the cheapest winner", () -> equal("play KD", bot.decide(
                turn("two-handed", List.of("KD", "AD"), List.of("QD"), "C", 0, "play KD", "play AD"))));
    }
}
