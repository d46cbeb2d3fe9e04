package arenabot;

import arena.v1.Bot.BotMessage;
import arena.v1.Bot.DecisionRequest;
import arena.v1.Bot.GameOver;
import arena.v1.Bot.Hello;
import arena.v1.Bot.MatchOver;
import arena.v1.Bot.RefereeMessage;
import arena.v1.Bot.Reply;
import arena.v1.Bot.Welcome;
import arena.v1.BotGatewayGrpc;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalChannel;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Plays a {@link Bot} on one stream to the referee: sends the Hello, answers every DecisionRequest
 * with one Reply, keeps each game's public log, and goes on across games and matches (a new Welcome
 * may follow a MatchOver) until the referee ends the stream.
 *
 * <p>{@link #main} is the entry point of a bot program: the address and token from
 * {@code --address HOST:PORT} and {@code --token TOKEN} (also {@code --address=...}), else from
 * {@code ARENA_ADDRESS} and {@code ARENA_TOKEN}; every failure is one line on stderr and an exit
 * status of its own ({@link ArenaException}'s {@code EXIT_*}, the same as the other SDKs'). The
 * address is {@code HOST:PORT} (or any gRPC target) or {@code unix:PATH}, as in the sandbox.
 */
public final class Arena {
    public static final int PROTOCOL_VERSION = 1;

    // gRPC and Netty log to stderr through java.util.logging, in many lines; the SDK says what failed
    // in one. Held here: the logging framework keeps its loggers only weakly.
    private static final List<Logger> QUIET = List.of(Logger.getLogger("io.grpc"), Logger.getLogger("io.netty"));

    static {
        for (Logger logger : QUIET) {
            logger.setLevel(Level.OFF);
        }
    }

    private Arena() {}

    /** The address and token a bot was given; {@code help}: --help was asked for. */
    public record Options(String address, String token, boolean help) {}

    /** The bot's own code threw: the cause is its exception. */
    public static final class BotFailure extends Exception {
        private static final long serialVersionUID = 1L;

        BotFailure(Throwable cause) {
            super(cause);
        }
    }

    /**
     * Reads {@code --address}, {@code --token} (each also as {@code --name=value}), {@code -h} and
     * {@code --help}; what is not given (or given empty) comes from {@code ARENA_ADDRESS} and
     * {@code ARENA_TOKEN}.
     *
     * @throws ArenaException (status 2) for an unknown argument or an option without its value
     */
    public static Options parseArgs(String[] args, Map<String, String> env) throws ArenaException {
        String address = env.getOrDefault("ARENA_ADDRESS", "");
        String token = env.getOrDefault("ARENA_TOKEN", "");
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String name = null;
            String value = null;
            for (String option : new String[] {"--address", "--token"}) {
                if (arg.equals(option)) {
                    name = option;
                    if (i + 1 >= args.length) {
                        throw new ArenaException(option + " needs a value", ArenaException.EXIT_USAGE);
                    }
                    value = args[++i];
                } else if (arg.startsWith(option + "=")) {
                    name = option;
                    value = arg.substring(option.length() + 1);
                }
            }
            if (name == null) {
                if (arg.equals("-h") || arg.equals("--help")) {
                    help = true;
                    continue;
                }
                throw new ArenaException("unknown argument \"" + arg
                        + "\" (expected --address HOST:PORT --token TOKEN)", ArenaException.EXIT_USAGE);
            }
            if (!value.isEmpty()) {
                if (name.equals("--address")) {
                    address = value;
                } else {
                    token = value;
                }
            }
        }
        return new Options(address, token, help);
    }

    /**
     * Runs the bot as a program and exits: 0 when the referee ended the stream after its matches,
     * else the failure's status with one line on stderr (a stack trace first for the bot's own error).
     */
    public static void main(Bot bot, String[] args) {
        // UTF-8 whatever the locale (a launched bot may have none, and Java 17 then writes '?' for
        // anything not ASCII), as the other SDKs write: for the SDK's messages and the bot's own.
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        System.exit(exitStatus(bot, args, System.getenv(), System.out, System.err));
    }

    static int exitStatus(Bot bot, String[] args, Map<String, String> env, PrintStream out,
            PrintStream err) {
        try {
            Options options = parseArgs(args, env);
            if (options.help()) {
                out.println("usage: bot [--address HOST:PORT | --address unix:PATH] [--token TOKEN]");
                out.println("Defaults: $ARENA_ADDRESS and $ARENA_TOKEN. A bot the arena launches gets its"
                        + " token only from $ARENA_TOKEN;");
                out.println("--token is for a bot started by hand against `arena serve`.");
                return ArenaException.EXIT_OK;
            }
            play(bot, options.address(), options.token());
            return ArenaException.EXIT_OK;
        } catch (ArenaException e) {
            err.println(bot.name() + ": " + e.getMessage());
            return e.exitCode();
        } catch (BotFailure e) {
            e.getCause().printStackTrace(err);
            err.println(bot.name() + ": the bot's own code failed; stopping");
            return ArenaException.EXIT_BOT_ERROR;
        } finally {
            err.flush();
            out.flush();
        }
    }

    /**
     * One session on one stream, until the referee ends it; the number of matches played.
     *
     * @throws ArenaException for the session's failures (no address or token, unreachable, refused,
     *     the stream broken or ended mid-match, a request that cannot be read)
     * @throws BotFailure when the bot's own code throws (the stream is then dropped, which the referee
     *     records for the seat)
     */
    public static int play(Bot bot, String address, String token) throws ArenaException, BotFailure {
        if (address == null || address.isEmpty()) {
            throw new ArenaException("no referee address: pass --address HOST:PORT or set ARENA_ADDRESS",
                    ArenaException.EXIT_USAGE);
        }
        if (token == null || token.isEmpty()) {
            throw new ArenaException("no token: set ARENA_TOKEN (or pass --token TOKEN)",
                    ArenaException.EXIT_USAGE);
        }
        EventLoopGroup group = null;
        UnixBridge bridge = null;
        ManagedChannel channel;
        try {
            if (address.startsWith("unix:")) {
                String path = address.substring("unix:".length());
                if (path.startsWith("//")) {
                    path = path.substring(2); // unix:///abs/path, gRPC's URI form
                }
                if (path.isEmpty()) {
                    throw new ArenaException("the address " + address + " names no socket",
                            ArenaException.EXIT_USAGE);
                }
                group = new DefaultEventLoopGroup(1, daemonThreads());
                bridge = new UnixBridge(Path.of(path), group);
                channel = NettyChannelBuilder.forAddress(bridge.address())
                        .channelType(LocalChannel.class)
                        .eventLoopGroup(group)
                        .usePlaintext()
                        .build();
            } else {
                channel = NettyChannelBuilder.forTarget(address).usePlaintext().build();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ArenaException("interrupted while connecting", ArenaException.EXIT_CONNECTION);
        } catch (IllegalArgumentException e) {
            throw new ArenaException("bad referee address " + address + ": " + e.getMessage(),
                    ArenaException.EXIT_USAGE);
        }
        try {
            return new Session(bot, address, token, bridge).run(channel);
        } finally {
            channel.shutdownNow();
            try {
                channel.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (bridge != null) {
                bridge.close();
            }
            if (group != null) {
                group.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
            }
        }
    }

    private static java.util.concurrent.ThreadFactory daemonThreads() {
        return runnable -> {
            Thread thread = new Thread(runnable, "arena-unix-loop");
            thread.setDaemon(true);
            return thread;
        };
    }

    /** What the stream delivered, with the moment it arrived. */
    private record Received(Object item, long nanos) {}

    private static final Object END = new Object();

    /** The state of one stream. */
    private static final class Session {
        private final Bot bot;
        private final String address;
        private final String token;
        private final UnixBridge bridge;
        private final Map<String, Welcome> playing = new LinkedHashMap<>(); // welcomed, not over
        private final Map<String, List<String>> logs = new HashMap<>(); // "match/game" -> log
        private final Map<String, Long> seeds = new HashMap<>();
        private int welcomed;
        private int matchesOver;
        private boolean heard;

        Session(Bot bot, String address, String token, UnixBridge bridge) {
            this.bot = bot;
            this.address = address;
            this.token = token;
            this.bridge = bridge;
        }

        int run(ManagedChannel channel) throws ArenaException, BotFailure {
            BlockingQueue<Received> inbox = new LinkedBlockingQueue<>();
            StreamObserver<BotMessage> out = BotGatewayGrpc.newStub(channel).play(
                    new StreamObserver<RefereeMessage>() {
                        @Override
                        public void onNext(RefereeMessage message) {
                            inbox.add(new Received(message, System.nanoTime()));
                        }

                        @Override
                        public void onError(Throwable error) {
                            inbox.add(new Received(error, System.nanoTime()));
                        }

                        @Override
                        public void onCompleted() {
                            inbox.add(new Received(END, System.nanoTime()));
                        }
                    });
            boolean finished = false;
            try {
                out.onNext(BotMessage.newBuilder().setHello(Hello.newBuilder()
                        .setToken(token)
                        .setName(bot.name())
                        .setVersion(bot.version())
                        .setProtocolVersion(PROTOCOL_VERSION)).build());
                while (true) {
                    Received received;
                    try {
                        received = inbox.take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new ArenaException("interrupted", ArenaException.EXIT_CONNECTION);
                    }
                    if (received.item() == END) {
                        finished = true;
                        out.onCompleted();
                        return ended();
                    }
                    if (received.item() instanceof Throwable error) {
                        finished = true;
                        return broken(error);
                    }
                    heard = true;
                    handle((RefereeMessage) received.item(), received.nanos(), out);
                }
            } finally {
                if (!finished) {
                    // The bot failed, or a request could not be read: drop the stream.
                    out.onError(Status.CANCELLED.withDescription("the bot stopped").asRuntimeException());
                }
            }
        }

        private void handle(RefereeMessage message, long receivedNanos, StreamObserver<BotMessage> out)
                throws ArenaException, BotFailure {
            switch (message.getBodyCase()) {
                case WELCOME -> {
                    Welcome welcome = message.getWelcome();
                    welcomed++;
                    playing.put(welcome.getMatchId(), welcome);
                    call(() -> bot.onWelcome(welcome));
                }
                case REQUEST -> answer(message.getRequest(), receivedNanos, out);
                case GAME_OVER -> {
                    GameOver over = message.getGameOver();
                    String key = over.getMatchId() + "/" + over.getGame();
                    logs.remove(key);
                    seeds.remove(key);
                    call(() -> bot.onGameOver(over));
                }
                case MATCH_OVER -> {
                    MatchOver over = message.getMatchOver();
                    matchesOver++;
                    playing.remove(over.getMatchId());
                    String prefix = over.getMatchId() + "/";
                    logs.keySet().removeIf(key -> key.startsWith(prefix));
                    seeds.keySet().removeIf(key -> key.startsWith(prefix));
                    call(() -> bot.onMatchOver(over));
                }
                case REFUSED -> throw new ArenaException(
                        "the referee refused the bot: " + message.getRefused().getReason(),
                        ArenaException.EXIT_REFUSED);
                default -> {
                    // An event, or a body added after this SDK: not for bots.
                }
            }
        }

        private void answer(DecisionRequest request, long receivedNanos, StreamObserver<BotMessage> out)
                throws ArenaException, BotFailure {
            String what = "request " + Long.toUnsignedString(request.getRequestId()) + " of match "
                    + request.getMatchId();
            if (request.getLegalActionsCount() == 0) {
                throw unreadable(what, "it has no legal action");
            }
            List<Action> legal = new ArrayList<>(request.getLegalActionsCount());
            for (int i = 0; i < request.getLegalActionsCount(); i++) {
                try {
                    legal.add(Action.fromWire(request.getLegalActions(i)));
                } catch (IllegalArgumentException e) {
                    throw unreadable(what, "legal action " + (i + 1) + ": " + e.getMessage());
                }
            }
            // The cards a bot reads through Turn (hand, trick, turn-up) are checked here, once: a card
            // the SDK cannot read is the referee's fault, not the bot's.
            arena.v1.Game.Observation obs = request.getObservation();
            try {
                Turn.cards(obs.getHandList());
                for (arena.v1.Game.PlayedCard played : obs.getTrickList()) {
                    Card.parse(played.getCard());
                }
                if (!obs.getTurnUp().isEmpty()) {
                    Card.parse(obs.getTurnUp());
                }
            } catch (IllegalArgumentException e) {
                throw unreadable(what, "its observation: " + e.getMessage());
            }
            String key = request.getMatchId() + "/" + request.getGame();
            List<String> log = logs.get(key);
            boolean first = log == null;
            if (first) {
                log = new ArrayList<>();
                logs.put(key, log);
                seeds.put(key, GameSeed.of(request));
            }
            log.addAll(request.getEventsList());
            long seed = seeds.get(key);
            Turn turn = new Turn(request, legal, playing.get(request.getMatchId()), log, receivedNanos, seed);
            if (first) {
                GameStart start = new GameStart(request.getMatchId(), request.getGame(), request.getSeat(),
                        seed, request);
                call(() -> bot.onGameStart(start));
            }
            String[] choice = new String[1];
            call(() -> choice[0] = bot.decide(turn));
            if (choice[0] == null) {
                throw new BotFailure(new IllegalStateException(
                        bot.getClass().getSimpleName() + ".decide() returned null, not an action's text"));
            }
            long now = System.nanoTime();
            if (turn.welcome() != null && now > turn.hardDeadlineNanos()) {
                // The referee has timed the seat out and ignores the reply; after a match's last game it
                // may already have ended the stream, so nothing is sent.
                System.err.println(bot.name() + ": " + what + " took "
                        + (now - receivedNanos) / 1_000_000 + " ms, past its limit of "
                        + (turn.hardDeadlineNanos() - receivedNanos) / 1_000_000
                        + " ms (budget + bank + grace): timed out, the reply is not sent");
                return;
            }
            out.onNext(BotMessage.newBuilder().setReply(Reply.newBuilder()
                    .setRequestId(request.getRequestId())
                    .setMatchId(request.getMatchId())
                    .setAction(choice[0])).build());
        }

        private ArenaException unreadable(String what, String why) {
            return new ArenaException(oneLine("cannot read " + what + " from the referee at " + address
                    + ": " + why), ArenaException.EXIT_CONNECTION);
        }

        /** The stream ended with status OK. */
        private int ended() throws ArenaException {
            if (welcomed == 0) {
                throw new ArenaException("the referee at " + address
                        + " ended the stream without a Welcome or Refused", ArenaException.EXIT_CONNECTION);
            }
            if (!playing.isEmpty()) {
                throw new ArenaException("the referee at " + address
                        + " ended the stream in the middle of match " + playing.keySet().iterator().next(),
                        ArenaException.EXIT_CONNECTION);
            }
            return matchesOver;
        }

        /** The stream failed. */
        private int broken(Throwable error) throws ArenaException {
            Status status = Status.fromThrowable(error);
            String details = status.getDescription() == null ? "" : status.getDescription();
            Throwable garbled = cause(error, InvalidProtocolBufferException.class);
            if (garbled != null) {
                throw new ArenaException(oneLine("the referee at " + address
                        + " sent a message that is not a RefereeMessage: " + garbled.getMessage()),
                        ArenaException.EXIT_CONNECTION);
            }
            String what = status.getCode() + ": " + details;
            if (!heard) {
                if (status.getCode() == Status.Code.UNAVAILABLE) {
                    String why = bridge != null && bridge.failure() != null
                            ? bridge.failure().getMessage() : details;
                    throw new ArenaException(oneLine("cannot reach the referee at " + address + ": " + why),
                            ArenaException.EXIT_CONNECTION);
                }
                throw new ArenaException(oneLine("the referee at " + address
                        + " ended the stream before a Welcome: " + what), ArenaException.EXIT_CONNECTION);
            }
            if (!playing.isEmpty()) {
                throw new ArenaException(oneLine("the stream to the referee at " + address
                        + " broke during match " + playing.keySet().iterator().next() + ": " + what),
                        ArenaException.EXIT_CONNECTION);
            }
            if (matchesOver == 0) {
                throw new ArenaException(oneLine("the stream to the referee at " + address + " broke: "
                        + what), ArenaException.EXIT_CONNECTION);
            }
            return matchesOver; // broken between matches, after the last one was over: no game affected
        }

        private interface Hook {
            void run() throws Exception;
        }

        private static void call(Hook hook) throws BotFailure {
            try {
                hook.run();
            } catch (Exception | StackOverflowError e) {
                throw new BotFailure(e);
            }
        }
    }

    private static Throwable cause(Throwable error, Class<? extends Throwable> type) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return t;
            }
        }
        return null;
    }

    static String oneLine(String text) {
        String line = String.join(" ", text.trim().split("\\s+"));
        return line.length() <= 300 ? line : line.substring(0, 297) + "...";
    }
}
