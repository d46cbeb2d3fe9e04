package arena

import (
	"strings"
	"testing"

	"arenakit/arenapb"
)

func TestParseCard(t *testing.T) {
	for text, want := range map[string]Card{
		"QS":   {Rank: 'Q', Suit: 'S'},
		"TD":   {Rank: 'T', Suit: 'D'},
		"7H.1": {Rank: '7', Suit: 'H', Pack: 1},
		"ac.4": {Rank: 'A', Suit: 'C', Pack: 4},
	} {
		got, err := ParseCard(text)
		if err != nil || got != want {
			t.Errorf("ParseCard(%q) = %+v, %v; want %+v", text, got, err, want)
		}
	}
	if c, _ := ParseCard("KH.2"); c.String() != "KH.2" || c.Kind() != "KH" || c.Order() != 5 || c.Brisque() || !c.Public() {
		t.Errorf("KH.2 reads as %+v", c)
	}
	if c, _ := ParseCard("TS"); c.String() != "TS" || c.Order() != 6 || !c.Brisque() || c.Public() {
		t.Errorf("TS reads as %+v", c)
	}
	for _, bad := range []string{"", "Q", "QSS", "1S", "QX", "QS.", "QS.0", "QS.-1", "QS.+1", "QS.x"} {
		if _, err := ParseCard(bad); err == nil || !strings.Contains(err.Error(), "not a card") {
			t.Errorf("ParseCard(%q): want a 'not a card' error, got %v", bad, err)
		}
	}
}

func TestParseActionFromMessage(t *testing.T) {
	msg := &arenapb.Action{
		Text: "declare royal-marriage KH QH.1", Verb: arenapb.Verb_VERB_DECLARE,
		Combination: arenapb.Combination_COMBINATION_ROYAL_MARRIAGE, Cards: []string{"KH", "QH.1"},
	}
	a, err := ParseAction(msg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != msg.Text || a.Verb != VerbDeclare || a.Combination != "royal-marriage" || !a.Known() || a.Score() != 40 {
		t.Errorf("got %+v", a)
	}
	if len(a.Cards) != 2 || a.Cards[0] != (Card{'K', 'H', 0}) || a.Cards[1] != (Card{'Q', 'H', 1}) {
		t.Errorf("cards %+v", a.Cards)
	}
}

func TestParseActionText(t *testing.T) {
	cases := []struct {
		text, verb, combo string
		cards             int
		score             int
	}{
		{"play QS", VerbPlay, "", 1, -1},
		{"play KH.1", VerbPlay, "", 1, -1},
		{"declare four-aces AS AH AD AC", VerbDeclare, "four-aces", 4, 100},
		{"declare carte-blanche", VerbDeclare, "carte-blanche", 0, 50},
		{"exchange 7H", VerbExchange, "", 1, 10},
		{"done", VerbDone, "", 0, -1},
	}
	for _, c := range cases {
		a, err := ParseActionText(c.text)
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if a.Text != c.text || a.Verb != c.verb || a.Combination != c.combo || len(a.Cards) != c.cards || a.Score() != c.score {
			t.Errorf("%q reads as %+v (score %d)", c.text, a, a.Score())
		}
	}
}

// A verb newer than this SDK (four-handed partners' "inquire") passes through as its text and verb.
func TestUnknownVerbPassesThrough(t *testing.T) {
	for _, msg := range []*arenapb.Action{
		{Text: "inquire", Verb: arenapb.Verb(5)},
		{Text: "inquire QS partner", Verb: arenapb.Verb(5)},
		{Text: "inquire QS", Verb: arenapb.Verb(5), Cards: []string{"QS"}},
		{Text: "inquire QS"}, // no verb field at all
	} {
		a, err := ParseAction(msg)
		if err != nil {
			t.Errorf("%q: %v", msg.Text, err)
			continue
		}
		if a.Text != msg.Text || a.Verb != "inquire" || a.Known() || a.Score() != -1 {
			t.Errorf("%q reads as %+v", msg.Text, a)
		}
		if strings.Contains(msg.Text, "QS") && (len(a.Cards) != 1 || a.Cards[0].Kind() != "QS") {
			t.Errorf("%q: cards %+v", msg.Text, a.Cards)
		}
		if strings.Contains(msg.Text, "partner") && (len(a.Args) != 1 || a.Args[0] != "partner") {
			t.Errorf("%q: args %+v", msg.Text, a.Args)
		}
	}
	// A combination newer than the stubs is read from the text.
	a, err := ParseAction(&arenapb.Action{Text: "declare grand-slam AS", Verb: arenapb.Verb_VERB_DECLARE, Combination: arenapb.Combination(99)})
	if err != nil || a.Combination != "grand-slam" || a.Score() != 0 {
		t.Errorf("new combination: %+v, %v", a, err)
	}
}

func TestParseActionErrors(t *testing.T) {
	for _, c := range []struct {
		msg  *arenapb.Action
		want string
	}{
		{nil, "empty action"},
		{&arenapb.Action{Verb: arenapb.Verb_VERB_PLAY}, "without text"},
		{&arenapb.Action{Text: "play ZZ"}, `not a card: "ZZ"`},
		{&arenapb.Action{Text: "play"}, "names one card"},
		{&arenapb.Action{Text: "play QS KS"}, "names one card"},
		{&arenapb.Action{Text: "done QS"}, "names no card"},
		{&arenapb.Action{Text: "declare"}, "without its combination"},
		{&arenapb.Action{Text: "play QS", Verb: arenapb.Verb_VERB_DECLARE}, "verb field says declare"},
		{&arenapb.Action{Text: "declare marriage KS QS", Verb: arenapb.Verb_VERB_DECLARE, Combination: arenapb.Combination_COMBINATION_BEZIQUE}, "combination field says bezique"},
		{&arenapb.Action{Text: "play QS", Verb: arenapb.Verb_VERB_PLAY, Cards: []string{"QS", "JD"}}, "names 2 cards"},
	} {
		_, err := ParseAction(c.msg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error with %q, got %v", c.msg, c.want, err)
		}
	}
}

func TestParseArgs(t *testing.T) {
	env := map[string]string{"ARENA_ADDRESS": "unix:/run/arena/referee.sock", "ARENA_TOKEN": "from-env"}
	getenv := func(k string) string { return env[k] }
	o, err := ParseArgs(nil, getenv, true)
	if err != nil || o.Address != "unix:/run/arena/referee.sock" || o.Token != "from-env" {
		t.Errorf("environment: %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"--address", "127.0.0.1:5", "--token=t"}, getenv, true)
	if err != nil || o.Address != "127.0.0.1:5" || o.Token != "t" {
		t.Errorf("command line wins: %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"--address=", "--token", ""}, getenv, true)
	if err != nil || o.Address != env["ARENA_ADDRESS"] || o.Token != "from-env" {
		t.Errorf("an empty value is not given: %+v, %v", o, err)
	}
	if o, _ = ParseArgs([]string{"-h"}, getenv, true); !o.Help {
		t.Error("-h is help")
	}
	if _, err = ParseArgs([]string{"--token"}, getenv, true); err == nil || err.Error() != "--token needs a value" {
		t.Errorf("a missing value: %v", err)
	}
	if _, err = ParseArgs([]string{"--depth", "3"}, getenv, true); err == nil || !strings.Contains(err.Error(), `unknown argument "--depth"`) {
		t.Errorf("strict: %v", err)
	}
	if o, err = ParseArgs([]string{"--depth", "3", "--token", "x"}, getenv, false); err != nil || o.Token != "x" {
		t.Errorf("not strict: %+v, %v", o, err)
	}
}

// The example of clients/README.md, the same number the Python and JavaScript SDKs give.
func TestGameSeed(t *testing.T) {
	text := GameSeedText("two-handed", 0, 0, 1, "AD.1", []string{"QS.2", "TS", "7C", "QS"})
	if text != "arena-game-seed/1|two-handed|0|0|1|AD|7C QS QS TS" {
		t.Errorf("text %q", text)
	}
	if got := GameSeed("two-handed", 0, 0, 1, "AD.1", []string{"QS.2", "TS", "7C", "QS"}); got != 713393136448822412 {
		t.Errorf("seed %d", got)
	}
	if GameSeedText("rubicon", 1, 2, 0, "", nil) != "arena-game-seed/1|rubicon|1|2|0||" {
		t.Error("no turn-up, no hand")
	}
}
