#!/bin/sh
# Installs the peers' packages (bench/peers/package.json) when they are missing or older than the lock
# file (`npm ci` leaves node_modules/.package-lock.json newer than it); without a lock, `npm install`.
set -e
dir="$(dirname "$0")/.."
[ -f "$dir/package.json" ] || exit 0
if [ -f "$dir/package-lock.json" ]; then
  [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] || npm --prefix "$dir" ci
else
  [ -d "$dir/node_modules" ] || npm --prefix "$dir" install
fi
