#!/usr/bin/env python3
"""Follow one loopfleet session's events from Python, with redis-py.

Every session has one Redis stream, <queue>:events:<session id>. Each entry has two fields: `type`
(the event type, e.g. input_started) and `data` (a JSON object with `seq`, `sessionId`, `inputSeq`
and the event's own fields). This script reads the stream with XREAD BLOCK, prints every event, and
stops at the first `input_finished` (or at the one of --input-seq).

    python3 subscribe.py demo --after 0
    REDIS_URL=redis://127.0.0.1:6379 LOOPFLEET_QUEUE=loopfleet python3 subscribe.py demo

Exit codes: 0 after input_finished, 3 when --timeout passed first (2: a bad argument).
"""

import argparse
import json
import os
import sys
import time

import redis


def parse_args():
    parser = argparse.ArgumentParser(description="Print a loopfleet session's events until input_finished.")
    parser.add_argument("session", help="the session id")
    parser.add_argument("--after", default="$",
                        help="stream id to start after: 0 for everything retained, $ (default) for new events only, "
                             "or an id you saved")
    parser.add_argument("--input-seq", type=int, default=None,
                        help="stop at this input's input_finished (default: the first one seen)")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"),
                        help="Redis URL (default: $REDIS_URL or redis://127.0.0.1:6379)")
    parser.add_argument("--queue", default=os.environ.get("LOOPFLEET_QUEUE", "loopfleet"),
                        help="the fleet's queue name (default: $LOOPFLEET_QUEUE or loopfleet)")
    parser.add_argument("--timeout", type=float, default=None, help="give up after this many seconds")
    return parser.parse_args()


def follow(client, key, cursor, input_seq, deadline):
    """Prints events from `cursor` on; returns the input_finished data, or None at the deadline."""
    if cursor == "$":
        # Pin "$" to the newest entry now: each later XREAD then resumes from a real id, and no event
        # written between two reads is missed.
        newest = client.xrevrange(key, count=1)
        cursor = newest[0][0] if newest else "0-0"
    last_seq = None
    while deadline is None or time.monotonic() < deadline:
        # BLOCK waits up to a second for new entries, so the deadline is checked while idle.
        reply = client.xread({key: cursor}, block=1000, count=100)
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                cursor = entry_id
                event_type = fields.get("type")
                data = json.loads(fields.get("data", "{}"))
                # `seq` counts a session's events 1, 2, 3 ... with no hole: a jump means the stream lost
                # entries (trimmed or expired). Rebuild what is missing from `loopfleet history`.
                if last_seq is not None and data.get("seq") != last_seq + 1:
                    print(f"gap: events {last_seq + 1} to {data.get('seq', 0) - 1} are gone", flush=True)
                last_seq = data.get("seq")
                print(f"{entry_id} {event_type} {json.dumps(data, sort_keys=True)}", flush=True)
                if event_type == "input_finished" and input_seq in (None, data.get("inputSeq")):
                    return data
    return None


def main():
    args = parse_args()
    key = f"{args.queue}:events:{args.session}"
    client = redis.Redis.from_url(args.redis, decode_responses=True)
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    try:
        finished = follow(client, key, args.after, args.input_seq, deadline)
    except KeyboardInterrupt:
        return 130
    finally:
        client.close()
    if finished is None:
        print(f"timed out after {args.timeout} s", file=sys.stderr)
        return 3
    print(f"finished: input {finished.get('inputSeq')} {finished.get('status')}: {finished.get('finalText', '')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
