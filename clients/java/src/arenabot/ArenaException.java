package arenabot;

/**
 * A failure of the session, not of the bot's own code, reported by its message alone (one line) with
 * an exit status of its own: the same statuses as the Python and JavaScript SDKs.
 */
public class ArenaException extends Exception {
    /** The referee ended the stream after the last match. */
    public static final int EXIT_OK = 0;
    /** The bot's own code threw (its stack trace is printed). */
    public static final int EXIT_BOT_ERROR = 1;
    /** No referee address or token, or an unknown option. */
    public static final int EXIT_USAGE = 2;
    /**
     * The referee could not be reached, the stream broke or ended in the middle of a match, or the
     * referee sent a request the SDK cannot read.
     */
    public static final int EXIT_CONNECTION = 3;
    /** The referee refused the Hello (the reason is printed). */
    public static final int EXIT_REFUSED = 4;

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    public ArenaException(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
