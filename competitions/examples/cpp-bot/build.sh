#!/bin/sh
# Builds this bot with the arena's C++ starter kit: sh build.sh KIT PROTO (the arena gives the
# kit's folder and the protocol's as {kit} and {proto}). To try it from a clone of the arena:
#   sh build.sh ../../../clients/cpp ../../../proto && ARENA_ADDRESS=... ARENA_TOKEN=... kit/bot
set -eu
proto=$(cd "$2" && pwd)
rm -rf kit
cp -R "$1" kit
chmod -R u+w kit
make -s -C kit clean
cp bot.cc kit/bot.cc
make -C kit PROTO_DIR="$proto"
