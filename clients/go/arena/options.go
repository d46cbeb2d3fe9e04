package arena

import (
	"fmt"
	"io"
	"strings"
)

// Options are where to dial and which token to present.
type Options struct {
	Address string // "HOST:PORT", or "unix:/path/to/socket" (inside the arena's sandbox)
	Token   string
	Help    bool      // -h or --help was given
	Log     io.Writer // where the SDK writes its notes (a reply decided too late); nil: standard error
}

// ParseArgs reads the command line the way every SDK of the arena does: --address HOST:PORT and
// --token TOKEN (also --address=HOST:PORT), else the environment's ARENA_ADDRESS and ARENA_TOKEN
// (getenv, usually os.Getenv); the command line wins, and an empty value counts as not given. An
// option it does not know is an error when strict, else left to the bot.
//
// A bot the arena launches gets its token only from ARENA_TOKEN (never on its command line, which any
// process of the machine can read); --token is for a bot started by hand against `arena serve`.
func ParseArgs(args []string, getenv func(string) string, strict bool) (Options, error) {
	opts := Options{Address: getenv("ARENA_ADDRESS"), Token: getenv("ARENA_TOKEN")}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, inline := strings.Cut(arg, "=")
		switch {
		case name == "--address" || name == "--token":
			if !inline {
				if i+1 >= len(args) {
					return opts, usageError(fmt.Sprintf("%s needs a value", arg))
				}
				i++
				value = args[i]
			}
			if value == "" {
				continue
			}
			if name == "--address" {
				opts.Address = value
			} else {
				opts.Token = value
			}
		case arg == "-h" || arg == "--help":
			opts.Help = true
		case strict:
			return opts, usageError(fmt.Sprintf("unknown argument %q (expected --address HOST:PORT --token TOKEN)", arg))
		}
	}
	return opts, nil
}

// Usage is the text -h prints.
func Usage(program string) string {
	return fmt.Sprintf("usage: %s [--address HOST:PORT] [--token TOKEN]\n"+
		"Defaults: $ARENA_ADDRESS and $ARENA_TOKEN. A bot the arena launches gets its token only from\n"+
		"$ARENA_TOKEN; --token is for a bot started by hand against `arena serve`.\n", program)
}
