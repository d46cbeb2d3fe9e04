package arena

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"arenakit/arenapb"
)

// ProtocolVersion is the version of the protocol this SDK speaks, sent in the Hello.
const ProtocolVersion = 1

// Exit statuses of Main (the same numbers as the Python and JavaScript SDKs').
const (
	ExitOK         = 0 // the referee ended the stream after the last match
	ExitBotError   = 1 // the bot's own code failed (returned an error or panicked)
	ExitUsage      = 2 // no referee address or token, or a bad command-line argument
	ExitConnection = 3 // the referee could not be reached, the stream broke or ended mid-match, or a request could not be read
	ExitRefused    = 4 // the referee refused the Hello (the reason is printed)
)

// Clock is a decision's time: Budget for this decision, Bank left for the rest of the game.
type Clock struct {
	Budget time.Duration
	Bank   time.Duration
}

// Turn is one decision the referee asks of the bot.
type Turn struct {
	RequestID   uint64
	MatchID     string
	Game        int // 0-based, within the match
	Seat        int
	Observation *arenapb.Observation // the seat's view: hand, trick, seats, trump, stock_size, ...
	Legal       []Action             // every legal action, sorted as the referee sent them; never empty
	Clock       Clock
	Events      []string         // public log entries new since this player's previous request
	Log         []string         // the game's whole public log seen so far (Events included)
	Welcome     *arenapb.Welcome // the Welcome of this match (nil if none was seen)
	GameSeed    uint64           // GameSeed of this game
	Received    time.Time        // when the SDK read the request
	Deadline    time.Time        // Received + budget: answer by then and no bank is spent
	Limit       time.Time        // Received + budget + bank + grace: past it the seat has timed out (zero: unknown)
	raw         *arenapb.DecisionRequest
}

// Request is the DecisionRequest as it came, for fields the Turn does not copy.
func (t *Turn) Request() *arenapb.DecisionRequest { return t.raw }

// GameStart tells a bot that a game starts for it, before its first Decide in the game.
type GameStart struct {
	MatchID     string
	Game        int
	Seat        int
	Seed        uint64 // GameSeed of the game: seed the bot's random numbers with it
	Observation *arenapb.Observation
}

// Bot decides. Decide returns the text of the action to play (one of turn.Legal's Text, copied);
// an error, or a panic, ends the session as the bot's own failure (ExitBotError).
type Bot interface {
	Decide(turn *Turn) (string, error)
}

// The optional hooks: a Bot that has the method is called.
type (
	// WelcomeHandler hears of a match starting: seat, variant, options, time control, policies.
	WelcomeHandler interface {
		OnWelcome(welcome *arenapb.Welcome) error
	}
	// GameStartHandler hears of a game starting for the bot, with its seed.
	GameStartHandler interface {
		OnGameStart(start GameStart) error
	}
	// GameOverHandler hears of a game's end and its result.
	GameOverHandler interface {
		OnGameOver(over *arenapb.GameOver) error
	}
	// MatchOverHandler hears of a match's end: every game's result, the match points per seat.
	MatchOverHandler interface {
		OnMatchOver(over *arenapb.MatchOver) error
	}
)

// SessionError is a failure of the session (not of the bot's own code), reported by its message
// alone; Code is the exit status Main gives it.
type SessionError struct {
	Code int
	Msg  string
}

func (e *SessionError) Error() string { return e.Msg }

// BotError is a failure of the bot's own code: an error it returned, or a panic (with its stack).
type BotError struct {
	Err   error
	Stack []byte // the stack of a panic, else nil
}

func (e *BotError) Error() string { return e.Err.Error() }
func (e *BotError) Unwrap() error { return e.Err }

func usageError(msg string) error { return &SessionError{ExitUsage, msg} }

func connectionError(format string, args ...any) error {
	return &SessionError{ExitConnection, oneLine(fmt.Sprintf(format, args...))}
}

func oneLine(text string) string {
	line := strings.Join(strings.Fields(text), " ")
	if len(line) > 300 {
		line = line[:297] + "..."
	}
	return line
}

// dialer reaches "unix:/path" (also "unix:///path") over a Unix socket, anything else over TCP.
func dialer(ctx context.Context, address string) (net.Conn, error) {
	network := "tcp"
	if path, ok := unixPath(address); ok {
		network, address = "unix", path
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func unixPath(address string) (string, bool) {
	if !strings.HasPrefix(address, "unix:") {
		return "", false
	}
	path := strings.TrimPrefix(address, "unix:")
	if strings.HasPrefix(path, "//") {
		path = strings.TrimPrefix(path, "//")
	}
	return path, true
}

// Play is one session on one stream, until the referee ends it: the number of matches played, or a
// *SessionError (unreachable, refused, the stream broken or ended mid-match, a request that cannot be
// read) or a *BotError.
func Play(ctx context.Context, name, version string, bot Bot, opts Options) (int, error) {
	if opts.Address == "" {
		return 0, usageError("no referee address: pass --address HOST:PORT or set ARENA_ADDRESS")
	}
	if opts.Token == "" {
		return 0, usageError("no token: set ARENA_TOKEN (or pass --token TOKEN)")
	}
	address := opts.Address
	dialOpts := []grpc.DialOption{
		grpc.WithInsecure(),
		grpc.WithContextDialer(dialer),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(Codec{})),
	}
	if _, ok := unixPath(address); ok {
		dialOpts = append(dialOpts, grpc.WithAuthority("localhost"))
	}
	// "passthrough": the address goes to the dialer as it is, never to a name resolver.
	conn, err := grpc.DialContext(ctx, "passthrough:///"+address, dialOpts...)
	if err != nil {
		return 0, connectionError("cannot reach the referee at %s: %v", address, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // also drops the stream when the bot's own code fails
	s := &session{name: name, address: address, bot: bot, log: opts.Log, logs: map[string][]string{},
		seeds: map[string]uint64{}, welcomes: map[string]*arenapb.Welcome{}}
	if s.log == nil {
		s.log = os.Stderr
	}
	stream, err := arenapb.NewBotGatewayClient(conn).Play(ctx)
	if err != nil {
		return 0, s.streamFailed(err)
	}
	hello := &arenapb.Hello{Token: opts.Token, Name: name, Version: version, ProtocolVersion: ProtocolVersion}
	if err := stream.Send(&arenapb.BotMessage{Body: &arenapb.BotMessage_Hello{Hello: hello}}); err != nil && err != io.EOF {
		return 0, s.streamFailed(err)
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return s.ended()
		}
		if err != nil {
			return s.matchesOver, s.streamFailed(err)
		}
		s.heard = true
		if err := s.handle(stream, msg); err != nil {
			return s.matchesOver, err
		}
	}
}

type session struct {
	name        string
	log         io.Writer
	address     string
	bot         Bot
	heard       bool                        // anything at all from the referee
	welcomed    int                         // Welcomes received
	matchesOver int                         // MatchOvers received
	welcomes    map[string]*arenapb.Welcome // the matches being played (welcomed, not over)
	logs        map[string][]string         // "match/game" -> the game's public log so far
	seeds       map[string]uint64           // "match/game" -> the game's seed
}

func gameKey(matchID string, game int32) string { return fmt.Sprintf("%s/%d", matchID, game) }

func (s *session) handle(stream arenapb.BotGateway_PlayClient, msg *arenapb.RefereeMessage) error {
	switch body := msg.GetBody().(type) {
	case *arenapb.RefereeMessage_Welcome:
		w := body.Welcome
		s.welcomed++
		s.welcomes[w.GetMatchId()] = w
		if h, ok := s.bot.(WelcomeHandler); ok {
			return guard(func() error { return h.OnWelcome(w) })
		}
	case *arenapb.RefereeMessage_Request:
		return s.request(stream, body.Request)
	case *arenapb.RefereeMessage_GameOver:
		over := body.GameOver
		key := gameKey(over.GetMatchId(), over.GetGame())
		delete(s.logs, key)
		delete(s.seeds, key)
		if h, ok := s.bot.(GameOverHandler); ok {
			return guard(func() error { return h.OnGameOver(over) })
		}
	case *arenapb.RefereeMessage_MatchOver:
		over := body.MatchOver
		s.matchesOver++
		delete(s.welcomes, over.GetMatchId())
		prefix := over.GetMatchId() + "/"
		for key := range s.logs {
			if strings.HasPrefix(key, prefix) {
				delete(s.logs, key)
				delete(s.seeds, key)
			}
		}
		if h, ok := s.bot.(MatchOverHandler); ok {
			return guard(func() error { return h.OnMatchOver(over) })
		}
	case *arenapb.RefereeMessage_Refused:
		return &SessionError{ExitRefused, oneLine("the referee refused the bot: " + body.Refused.GetReason())}
	default:
		// An event (not sent to bots) or a body newer than this SDK: not for it.
	}
	return nil
}

func (s *session) request(stream arenapb.BotGateway_PlayClient, req *arenapb.DecisionRequest) error {
	received := time.Now()
	turn, err := s.turn(req, received)
	if err != nil {
		return connectionError("the referee at %s sent a request the SDK cannot read (request %d of match %s): %v",
			s.address, req.GetRequestId(), req.GetMatchId(), err)
	}
	key := gameKey(req.GetMatchId(), req.GetGame())
	if _, started := s.seeds[key]; !started {
		seed := RequestSeed(req)
		s.seeds[key] = seed
		if h, ok := s.bot.(GameStartHandler); ok {
			start := GameStart{req.GetMatchId(), int(req.GetGame()), int(req.GetSeat()), seed, req.GetObservation()}
			if err := guard(func() error { return h.OnGameStart(start) }); err != nil {
				return err
			}
		}
	}
	turn.GameSeed = s.seeds[key]
	s.logs[key] = append(s.logs[key], req.GetEvents()...)
	turn.Log = append([]string(nil), s.logs[key]...)
	var text string
	if err := guard(func() (e error) { text, e = s.bot.Decide(turn); return e }); err != nil {
		return err
	}
	if text == "" {
		return &BotError{Err: fmt.Errorf("Decide returned no action for request %d (return one of turn.Legal's Text)", req.GetRequestId())}
	}
	if !turn.Limit.IsZero() && time.Now().After(turn.Limit) {
		// The referee has timed the seat out and ignores the reply: not sent (a write to a stream
		// the referee has ended fails, and the GameOver and MatchOver still to be read are wanted).
		fmt.Fprintf(s.log, "%s: request %d of match %s took %d ms, past its limit of %d ms (budget + bank + grace): timed out, the reply is not sent\n",
			s.name, req.GetRequestId(), req.GetMatchId(), time.Since(received).Milliseconds(), turn.Limit.Sub(received).Milliseconds())
		return nil
	}
	reply := &arenapb.Reply{RequestId: req.GetRequestId(), MatchId: req.GetMatchId(), Action: text}
	// A failed write (the referee ended the stream meanwhile) is told by the next read.
	_ = stream.Send(&arenapb.BotMessage{Body: &arenapb.BotMessage_Reply{Reply: reply}})
	return nil
}

// turn reads a request; an error says what in it cannot be read.
func (s *session) turn(req *arenapb.DecisionRequest, received time.Time) (*Turn, error) {
	if req.GetMatchId() == "" {
		return nil, errors.New("no match_id")
	}
	if req.GetObservation() == nil {
		return nil, errors.New("no observation")
	}
	if len(req.GetLegalActions()) == 0 {
		return nil, errors.New("no legal actions")
	}
	legal := make([]Action, 0, len(req.GetLegalActions()))
	for _, msg := range req.GetLegalActions() {
		action, err := ParseAction(msg)
		if err != nil {
			return nil, err
		}
		legal = append(legal, action)
	}
	clock := Clock{
		Budget: time.Duration(req.GetClock().GetBudgetMs()) * time.Millisecond,
		Bank:   time.Duration(req.GetClock().GetBankMs()) * time.Millisecond,
	}
	turn := &Turn{
		RequestID:   req.GetRequestId(),
		MatchID:     req.GetMatchId(),
		Game:        int(req.GetGame()),
		Seat:        int(req.GetSeat()),
		Observation: req.GetObservation(),
		Legal:       legal,
		Clock:       clock,
		Events:      req.GetEvents(),
		Welcome:     s.welcomes[req.GetMatchId()],
		Received:    received,
		Deadline:    received.Add(clock.Budget),
		raw:         req,
	}
	if turn.Welcome != nil {
		// The referee measures from before it sends to after it receives, and sends the bank in
		// whole milliseconds: one more.
		grace := time.Duration(turn.Welcome.GetTimeControl().GetGraceMs()) * time.Millisecond
		turn.Limit = received.Add(clock.Budget + clock.Bank + time.Millisecond + grace)
	}
	return turn, nil
}

// guard runs the bot's own code: an error or a panic becomes a *BotError.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &BotError{Err: fmt.Errorf("panic: %v", p), Stack: debug.Stack()}
		}
	}()
	if e := f(); e != nil {
		return &BotError{Err: e}
	}
	return nil
}

func (s *session) playing() string {
	ids := make([]string, 0, len(s.welcomes))
	for id := range s.welcomes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// ended: the referee closed the stream with status OK.
func (s *session) ended() (int, error) {
	if s.welcomed == 0 {
		return 0, connectionError("the referee at %s ended the stream without a Welcome or Refused", s.address)
	}
	if id := s.playing(); id != "" {
		return s.matchesOver, connectionError("the referee at %s ended the stream in the middle of match %s", s.address, id)
	}
	return s.matchesOver, nil
}

// streamFailed: the stream ended with an error status.
func (s *session) streamFailed(err error) error {
	st := status.Convert(err)
	what := fmt.Sprintf("%s: %s", codeName(st.Code()), st.Message())
	if !s.heard {
		if st.Code() == codes.Unavailable {
			return connectionError("cannot reach the referee at %s: %s", s.address, st.Message())
		}
		return connectionError("the referee at %s ended the stream before a Welcome: %s", s.address, what)
	}
	if id := s.playing(); id != "" {
		return connectionError("the stream to the referee at %s broke during match %s: %s", s.address, id, what)
	}
	if s.matchesOver == 0 {
		return connectionError("the stream to the referee at %s broke: %s", s.address, what)
	}
	return nil // broken between matches, after the last one was over: no game is affected
}

func codeName(c codes.Code) string {
	return strings.ToUpper(strings.ReplaceAll(snake(c.String()), " ", "_"))
}

// snake turns gRPC's code names ("DeadlineExceeded") into the protocol's ("DEADLINE_EXCEEDED").
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Run is Main without the exit: the exit status, its messages written to stderr.
func Run(name, version string, bot Bot, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	opts, err := ParseArgs(args, getenv, true)
	if err == nil && opts.Help {
		fmt.Fprint(stdout, Usage(filepath.Base(programName())))
		return ExitOK
	}
	if err == nil {
		opts.Log = stderr
		_, err = Play(context.Background(), name, version, bot, opts)
	}
	var se *SessionError
	var be *BotError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "%s: %s\n", name, se.Msg)
		return se.Code
	case errors.As(err, &be):
		fmt.Fprintf(stderr, "%s: %v\n", name, be.Err)
		if be.Stack != nil {
			stderr.Write(be.Stack)
		}
		fmt.Fprintf(stderr, "%s: the bot's own code failed; stopping\n", name)
		return ExitBotError
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitConnection
	}
}

func programName() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return os.Args[0]
	}
	return "bot"
}

// Main runs the bot with the command line and the environment, and exits: 0 once the referee has
// ended the stream after its matches, else the status of the failure (Exit*) with one line on stderr
// (the bot's own failure: its error, a panic's stack, then that line).
func Main(name, version string, bot Bot) {
	os.Exit(Run(name, version, bot, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
