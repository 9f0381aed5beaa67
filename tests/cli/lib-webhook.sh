# shellcheck shell=bash
# webhook_start ADDR: a webhook for a run's end (tests/helpers/webhook-server.py) on
# ADDR; sets HOOK_URL (its URL, whose last part is a secret: $HOOK_TOKEN) and HOOK
# (its dir: $HOOK/posts, a JSON line per POST). Stopped on exit by webhook_stop.
webhook_start() {
	local i
	HOOK=$TRASH/hook
	HOOK_TOKEN=hook-secret-$$-$RANDOM$RANDOM
	mkdir -p "$HOOK" && echo "$HOOK_TOKEN" >"$HOOK/token" || return 1
	python3 "$TEST_SRCDIR/tests/helpers/webhook-server.py" "$1" "$HOOK" &
	for i in $(seq 1 100); do
		[ -s "$HOOK/port" ] && break
		sleep 0.1
	done
	[ -s "$HOOK/port" ] || return 1
	HOOK_URL=http://$1:$(cat "$HOOK/port")/notify/$HOOK_TOKEN
}

webhook_stop() {
	[ -z "${HOOK:-}" ] || touch "$HOOK/stop"
}

# webhook_posts N: waits (at most 30 s) until N POSTs came; prints each one's text
# and the processes whose argv held the secret then, "TEXT|HITS", a line each.
webhook_posts() {
	local i
	for i in $(seq 1 300); do
		[ "$(wc -l <"$HOOK/posts" 2>/dev/null || echo 0)" -ge "$1" ] && break
		sleep 0.1
	done
	python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(json.loads(r["body"])["text"], r["argv_hits"], sep="|")' "$HOOK/posts"
}
