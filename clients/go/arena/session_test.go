package arena

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"arenakit/arenapb"
)

// rawCodec lets the fake referee send bytes that are no message at all, besides real messages.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	return proto.Marshal(v.(proto.Message))
}
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (rawCodec) String() string { return "proto" }

// referee is a fake referee: script plays one stream (the Hello already read into hello).
type referee struct {
	t       *testing.T
	mu      sync.Mutex
	hellos  []*arenapb.Hello
	replies []*arenapb.Reply
}

func (r *referee) recv(s grpc.ServerStream) (*arenapb.BotMessage, error) {
	var m arenapb.BotMessage
	if err := s.RecvMsg(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ask sends a request and waits for its reply.
func (r *referee) ask(s grpc.ServerStream, req *arenapb.DecisionRequest) (*arenapb.Reply, error) {
	if err := s.SendMsg(&arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_Request{Request: req}}); err != nil {
		return nil, err
	}
	m, err := r.recv(s)
	if err != nil {
		return nil, err
	}
	reply := m.GetReply()
	if reply == nil {
		return nil, fmt.Errorf("expected a Reply, got %v", m)
	}
	r.mu.Lock()
	r.replies = append(r.replies, reply)
	r.mu.Unlock()
	return reply, nil
}

// serve starts the fake referee on network ("tcp" or "unix"); the bot's address to dial.
func serve(t *testing.T, network string, r *referee, script func(s grpc.ServerStream) error) string {
	t.Helper()
	var lis net.Listener
	var err error
	address := ""
	if network == "unix" {
		path := filepath.Join(t.TempDir(), "referee.sock")
		lis, err = net.Listen("unix", path)
		address = "unix:" + path
	} else {
		lis, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			address = lis.Addr().String()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer(grpc.CustomCodec(rawCodec{}), grpc.UnknownServiceHandler(
		func(_ interface{}, s grpc.ServerStream) error {
			m, err := r.recv(s)
			if err != nil {
				return err
			}
			r.mu.Lock()
			r.hellos = append(r.hellos, m.GetHello())
			r.mu.Unlock()
			return script(s)
		}))
	go server.Serve(lis)
	t.Cleanup(server.Stop)
	return address
}

func send(s grpc.ServerStream, msgs ...*arenapb.RefereeMessage) error {
	for _, m := range msgs {
		if err := s.SendMsg(m); err != nil {
			return err
		}
	}
	return nil
}

func welcome(match string) *arenapb.RefereeMessage {
	return &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_Welcome{Welcome: &arenapb.Welcome{
		MatchId: match, Variant: "two-handed", Games: 2,
		TimeControl: &arenapb.TimeControl{BudgetMs: 1000, BankMs: 10000, GraceMs: 100},
	}}}
}

func gameOver(match string, game int32) *arenapb.RefereeMessage {
	return &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_GameOver{GameOver: &arenapb.GameOver{MatchId: match, Game: game}}}
}

func matchOver(match string) *arenapb.RefereeMessage {
	return &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_MatchOver{MatchOver: &arenapb.MatchOver{MatchId: match}}}
}

func request(id uint64, match string, game int32, events []string, actions ...string) *arenapb.DecisionRequest {
	req := &arenapb.DecisionRequest{
		RequestId: id, MatchId: match, Game: game, Seat: 1,
		Observation: &arenapb.Observation{Variant: "two-handed", Seat: 1, Dealer: 0, TurnUp: "AD.1", Hand: []string{"QS", "7C"}},
		Clock:       &arenapb.Clock{BudgetMs: 1000, BankMs: 5000},
		Events:      events,
	}
	for _, a := range actions {
		req.LegalActions = append(req.LegalActions, &arenapb.Action{Text: a})
	}
	return req
}

// recorder answers each request with its last legal action and notes what it was told.
type recorder struct {
	turns    []*Turn
	welcomes []string
	starts   []GameStart
	overs    []string
	fail     error
	panic    bool
}

func (b *recorder) Decide(t *Turn) (string, error) {
	b.turns = append(b.turns, t)
	if b.panic {
		var m map[string]int
		m["boom"]++ // a nil map: the bot's own bug
	}
	if b.fail != nil {
		return "", b.fail
	}
	return t.Legal[len(t.Legal)-1].Text, nil
}
func (b *recorder) OnWelcome(w *arenapb.Welcome) error {
	b.welcomes = append(b.welcomes, w.GetMatchId())
	return nil
}
func (b *recorder) OnGameStart(s GameStart) error { b.starts = append(b.starts, s); return nil }
func (b *recorder) OnMatchOver(m *arenapb.MatchOver) error {
	b.overs = append(b.overs, m.GetMatchId())
	return nil
}

// run runs the bot against address within a time limit (a hang fails the test): status, stderr.
func run(t *testing.T, bot Bot, address string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run("tester", "9", bot, []string{"--address", address, "--token", "tok"},
			func(string) string { return "" }, &bytes.Buffer{}, &stderr)
	}()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(20 * time.Second):
		t.Fatal("the bot did not end within 20 s")
		return -1, ""
	}
}

// Several games and several matches on one stream, each with its Welcome; the log kept per game;
// exit 0 when the referee ends the stream after the last MatchOver.
func TestSeveralMatchesOnOneStream(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			r := &referee{t: t}
			address := serve(t, network, r, func(s grpc.ServerStream) error {
				// A tournament's check first: a Welcome and a MatchOver with no games.
				if err := send(s, welcome("check1"), matchOver("check1")); err != nil {
					return err
				}
				for _, match := range []string{"m1", "m2"} {
					if err := send(s, welcome(match)); err != nil {
						return err
					}
					for game := int32(0); game < 2; game++ {
						if _, err := r.ask(s, request(1+uint64(game)*2, match, game, []string{"deal 1", "seat 0 plays QH.1"}, "play QS", "play 7C")); err != nil {
							return err
						}
						if _, err := r.ask(s, request(2+uint64(game)*2, match, game, []string{"seat 1 plays 7C.1"}, "play QS")); err != nil {
							return err
						}
						if err := send(s, gameOver(match, game)); err != nil {
							return err
						}
					}
					if err := send(s, matchOver(match)); err != nil {
						return err
					}
				}
				return nil
			})
			bot := &recorder{}
			code, stderr := run(t, bot, address)
			if code != ExitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if h := r.hellos[0]; h.GetToken() != "tok" || h.GetName() != "tester" || h.GetVersion() != "9" || h.GetProtocolVersion() != 1 {
				t.Errorf("hello %v", h)
			}
			if len(r.replies) != 8 {
				t.Fatalf("%d replies", len(r.replies))
			}
			for i, reply := range r.replies {
				match := []string{"m1", "m2"}[i/4]
				want := []string{"play 7C", "play QS"}[i%2]
				if reply.GetMatchId() != match || reply.GetRequestId() != uint64(i%4+1) || reply.GetAction() != want {
					t.Errorf("reply %d: %v", i, reply)
				}
			}
			if strings.Join(bot.welcomes, " ") != "check1 m1 m2" || strings.Join(bot.overs, " ") != "check1 m1 m2" {
				t.Errorf("welcomes %v, matches over %v", bot.welcomes, bot.overs)
			}
			if len(bot.starts) != 4 || bot.starts[1].Game != 1 || bot.starts[2].MatchID != "m2" {
				t.Errorf("game starts %+v", bot.starts)
			}
			want := GameSeed("two-handed", 1, 0, 0, "AD.1", []string{"QS", "7C"})
			if bot.starts[0].Seed != want || bot.turns[0].GameSeed != want {
				t.Errorf("seed %d, want %d", bot.starts[0].Seed, want)
			}
			second := bot.turns[1]
			if strings.Join(second.Log, "|") != "deal 1|seat 0 plays QH.1|seat 1 plays 7C.1" || len(second.Events) != 1 {
				t.Errorf("log %q, events %q", second.Log, second.Events)
			}
			if bot.turns[2].Game != 1 || len(bot.turns[2].Log) != 2 {
				t.Errorf("a new game starts a new log: %+v", bot.turns[2].Log)
			}
			first := bot.turns[0]
			if first.Clock.Budget != time.Second || first.Clock.Bank != 5*time.Second ||
				first.Deadline.Sub(first.Received) != time.Second ||
				first.Limit.Sub(first.Received) != (1000+5000+1+100)*time.Millisecond ||
				first.Welcome.GetMatchId() != "m1" || first.Request().GetRequestId() != 1 {
				t.Errorf("clock %+v, deadline %v, limit %v", first.Clock, first.Deadline.Sub(first.Received), first.Limit.Sub(first.Received))
			}
		})
	}
}

// A request the SDK cannot read ends the bot with a clear line and status 3, never a hang (the
// fake referee then waits for a reply that never comes).
func TestUnreadableRequest(t *testing.T) {
	cases := []struct {
		name string
		req  *arenapb.DecisionRequest
		want string
	}{
		{"bad card", request(7, "m1", 0, nil, "play QS", "play ZZ"), `(request 7 of match m1): action "play ZZ": not a card: "ZZ"`},
		{"no actions", request(7, "m1", 0, nil), "no legal actions"},
		{"no observation", &arenapb.DecisionRequest{RequestId: 7, MatchId: "m1", LegalActions: []*arenapb.Action{{Text: "done"}}}, "no observation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &referee{t: t}
			address := serve(t, "tcp", r, func(s grpc.ServerStream) error {
				if err := send(s, welcome("m1"), &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_Request{Request: c.req}}); err != nil {
					return err
				}
				_, err := r.recv(s) // nothing comes: the bot has gone
				return err
			})
			code, stderr := run(t, &recorder{}, address)
			if code != ExitConnection || !strings.Contains(stderr, "sent a request the SDK cannot read") || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("one line: %q", stderr)
			}
		})
	}
}

// Bytes that are not a RefereeMessage: a clear line and status 3.
func TestGarbageFromTheReferee(t *testing.T) {
	r := &referee{t: t}
	address := serve(t, "tcp", r, func(s grpc.ServerStream) error {
		if err := send(s, welcome("m1")); err != nil {
			return err
		}
		if err := s.SendMsg([]byte{0xff, 0xff, 0xff}); err != nil {
			return err
		}
		_, err := r.recv(s)
		return err
	})
	code, stderr := run(t, &recorder{}, address)
	if code != ExitConnection || !strings.Contains(stderr, "broke during match m1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// A verb newer than the SDK reaches the bot, which may answer it like any other action.
func TestUnknownVerbReachesTheBot(t *testing.T) {
	r := &referee{t: t}
	address := serve(t, "tcp", r, func(s grpc.ServerStream) error {
		req := request(1, "m1", 0, nil, "play QS")
		req.LegalActions = append(req.LegalActions, &arenapb.Action{Text: "inquire", Verb: arenapb.Verb(5)})
		if err := send(s, welcome("m1")); err != nil {
			return err
		}
		if _, err := r.ask(s, req); err != nil {
			return err
		}
		return send(s, gameOver("m1", 0), matchOver("m1"))
	})
	bot := &recorder{}
	code, stderr := run(t, bot, address)
	if code != ExitOK || len(r.replies) != 1 || r.replies[0].GetAction() != "inquire" {
		t.Fatalf("exit %d, stderr %q, replies %v", code, stderr, r.replies)
	}
	if a := bot.turns[0].Legal[1]; a.Verb != "inquire" || a.Known() {
		t.Errorf("%+v", a)
	}
}

func TestSessionFailures(t *testing.T) {
	cases := []struct {
		name   string
		script func(r *referee, s grpc.ServerStream) error
		code   int
		want   string
	}{
		{"refused", func(r *referee, s grpc.ServerStream) error {
			return send(s, &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_Refused{Refused: &arenapb.Refused{Reason: "unknown or expired token"}}})
		}, ExitRefused, "tester: the referee refused the bot: unknown or expired token\n"},
		{"ended mid-match", func(r *referee, s grpc.ServerStream) error {
			return send(s, welcome("m1"))
		}, ExitConnection, "tester: the referee at ADDRESS ended the stream in the middle of match m1\n"},
		{"ended without a Welcome", func(r *referee, s grpc.ServerStream) error {
			return nil
		}, ExitConnection, "tester: the referee at ADDRESS ended the stream without a Welcome or Refused\n"},
		{"broken between matches", func(r *referee, s grpc.ServerStream) error {
			if err := send(s, welcome("m1"), matchOver("m1")); err != nil {
				return err
			}
			return errors.New("gone")
		}, ExitOK, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &referee{t: t}
			address := serve(t, "tcp", r, func(s grpc.ServerStream) error { return c.script(r, s) })
			code, stderr := run(t, &recorder{}, address)
			if want := strings.ReplaceAll(c.want, "ADDRESS", address); code != c.code || stderr != want {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, c.code, want)
			}
		})
	}
}

func TestUnreachableAndUsage(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := lis.Addr().String()
	lis.Close() // nobody listens there now
	code, stderr := run(t, &recorder{}, address)
	if code != ExitConnection || !strings.HasPrefix(stderr, "tester: cannot reach the referee at "+address+": ") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	var out bytes.Buffer
	code = Run("tester", "9", &recorder{}, nil, func(string) string { return "" }, &out, &out)
	if code != ExitUsage || out.String() != "tester: no referee address: pass --address HOST:PORT or set ARENA_ADDRESS\n" {
		t.Errorf("exit %d, %q", code, out.String())
	}
	out.Reset()
	code = Run("tester", "9", &recorder{}, nil, func(k string) string { return map[string]string{"ARENA_ADDRESS": "x:1"}[k] }, &out, &out)
	if code != ExitUsage || out.String() != "tester: no token: set ARENA_TOKEN (or pass --token TOKEN)\n" {
		t.Errorf("exit %d, %q", code, out.String())
	}
	out.Reset()
	code = Run("tester", "9", &recorder{}, []string{"--depth"}, func(string) string { return "" }, &out, &out)
	if code != ExitUsage || !strings.Contains(out.String(), `unknown argument "--depth"`) {
		t.Errorf("exit %d, %q", code, out.String())
	}
	out.Reset()
	if code = Run("tester", "9", &recorder{}, []string{"--help"}, func(string) string { return "" }, &out, &out); code != ExitOK || !strings.Contains(out.String(), "usage: ") {
		t.Errorf("exit %d, %q", code, out.String())
	}
}

// The bot's own failure (an error, a panic) ends the session with status 1, and the stream is
// dropped.
func TestBotFailure(t *testing.T) {
	for _, bot := range []*recorder{{fail: errors.New("no idea")}, {panic: true}} {
		r := &referee{t: t}
		closed := make(chan error, 1)
		address := serve(t, "tcp", r, func(s grpc.ServerStream) error {
			if err := send(s, welcome("m1"), &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_Request{Request: request(1, "m1", 0, nil, "play QS")}}); err != nil {
				return err
			}
			_, err := r.recv(s)
			closed <- err
			return err
		})
		code, stderr := run(t, bot, address)
		if code != ExitBotError || !strings.HasSuffix(stderr, "tester: the bot's own code failed; stopping\n") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if bot.panic && !strings.Contains(stderr, "assignment to entry in nil map") {
			t.Errorf("a panic's message and stack: %q", stderr)
		}
		if !bot.panic && !strings.HasPrefix(stderr, "tester: no idea\n") {
			t.Errorf("the bot's error: %q", stderr)
		}
		select {
		case err := <-closed:
			if err == nil {
				t.Error("the referee read a message after the failure")
			}
		case <-time.After(10 * time.Second):
			t.Error("the stream was not dropped")
		}
	}
}

// slow takes longer than its limit (budget + bank + grace) to decide.
type slow struct{ recorder }

func (b *slow) Decide(t *Turn) (string, error) {
	time.Sleep(t.Limit.Sub(t.Received) + 30*time.Millisecond)
	return b.recorder.Decide(t)
}

// A reply decided past the limit is not sent (the referee has timed the seat out and ignores it); the
// session goes on to its GameOver and MatchOver.
func TestAReplyDecidedTooLateIsNotSent(t *testing.T) {
	r := &referee{t: t}
	got := make(chan *arenapb.BotMessage, 4)
	address := serve(t, "tcp", r, func(s grpc.ServerStream) error {
		tight := welcome("m1")
		tight.GetWelcome().TimeControl = &arenapb.TimeControl{BudgetMs: 20, BankMs: 0, GraceMs: 10}
		req := request(1, "m1", 0, nil, "play QS")
		req.Clock = &arenapb.Clock{BudgetMs: 20, BankMs: 0}
		if err := send(s, tight, &arenapb.RefereeMessage{Body: &arenapb.RefereeMessage_Request{Request: req}}); err != nil {
			return err
		}
		go func() {
			for {
				m, err := r.recv(s)
				if err != nil {
					close(got)
					return
				}
				got <- m
			}
		}()
		time.Sleep(500 * time.Millisecond) // well past the bot's decision
		return send(s, gameOver("m1", 0), matchOver("m1"))
	})
	bot := &slow{}
	code, stderr := run(t, bot, address)
	if code != ExitOK || len(bot.turns) != 1 {
		t.Fatalf("exit %d, stderr %q, %d turns", code, stderr, len(bot.turns))
	}
	if !strings.HasPrefix(stderr, "tester: request 1 of match m1 took ") || !strings.HasSuffix(stderr, " past its limit of 31 ms (budget + bank + grace): timed out, the reply is not sent\n") {
		t.Errorf("stderr %q", stderr)
	}
	for m := range got {
		t.Errorf("the referee got %v", m)
	}
}
