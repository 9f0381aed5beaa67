# shellcheck shell=sh
# dispatch_notify STAGE JOB STATE DETAIL [ATTEMPTS RUN]: a run's end for good, POSTed as Slack's
# {"text": ...} to the webhook in STAGE/notify_url (written by submission, mode 0600,
# only when the inventory names one), with curl, else wget, else python3. The URL
# goes from that file to the tool (curl's config on stdin, wget's -i, python3's
# open), never onto a command line. STAGE/run_info holds "RUN HOST"; the attempts
# are STAGE/attempts' lines and one. A sweep's task on SLURM names its own attempts
# file and run id (ATTEMPTS, RUN). A failed notification is said on stderr (the
# job's log, without the URL) and never fails the job.

dispatch_notify() {
	if [ ! -f "$1/notify_url" ]; then
		return 0
	fi
	dn_run=
	dn_host=
	if [ -f "$1/run_info" ]; then
		read -r dn_run dn_host <"$1/run_info"
	fi
	dn_a=${5:-$1/attempts}
	dn_run=${6:-$dn_run}
	dn_n=1
	if [ -f "$dn_a" ]; then
		dn_n=$(($(wc -l <"$dn_a") + 1))
	fi
	dn_text=$(printf 'dispatch: run %s (job %s on %s) ended %s after %s attempt(s)%s' \
		"$dn_run" "$2" "$dn_host" "$3" "$dn_n" "${4:+: $4}" | tr -cd 'A-Za-z0-9 ._:,;/()@+=-')
	dn_body="{\"text\": \"$dn_text\"}"
	if command -v curl >/dev/null 2>&1; then
		sed 's/.*/url = "&"/' "$1/notify_url" |
			curl -sS -f -o /dev/null -m 20 -K - -H 'Content-Type: application/json' \
				--data-binary "$dn_body"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O /dev/null -T 20 --header='Content-Type: application/json' \
			--post-data="$dn_body" -i "$1/notify_url"
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import sys, urllib.request
u = open(sys.argv[1]).read().strip()
r = urllib.request.Request(u, data=sys.argv[2].encode(), headers={"Content-Type": "application/json"})
urllib.request.urlopen(r, timeout=20).read()' "$1/notify_url" "$dn_body"
	else
		echo "dispatch: run $dn_run: no curl, wget or python3 to send its end to the webhook" >&2
		return 0
	fi || echo "dispatch: run $dn_run: the webhook did not take its end (exit status $?)" >&2
	return 0
}
