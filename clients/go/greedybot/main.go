// The Go kit's example bot: greedy (see Greedy). Built by `make` into ./bot.
//
//	./bot --address 127.0.0.1:50051 --token TOKEN
//	ARENA_ADDRESS=127.0.0.1:50051 ARENA_TOKEN=TOKEN ./bot
package main

import "arenakit/arena"

func main() {
	arena.Main("greedy-go", "1", &Greedy{})
}
