#!/usr/bin/env python3
"""Checks on `dispatch --json queue` output for tests/cli/t7300-queue.sh; exit 1 with
a message when a check fails.

  has FILE JOB              a job JOB ("ID@HOST") is listed
  job FILE JOB K=V...       job JOB is listed with these fields (str() of the value)
  host FILE HOST K=V...     the hosts entry HOST has these fields
  all FILE K=V...           every job has these fields
  states FILE STATE...      every job's state is one of these
  active FILE               every job is queued or running
  nodes FILE JOB            job JOB runs on node1 or node2
"""
import json
import sys

ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
          "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "REQUEUE_FED",
          "REQUEUE_HOLD", "SPECIAL_EXIT"}


def fields_match(obj, pairs, what):
    for p in pairs:
        k, v = p.split("=", 1)
        if k not in obj or str(obj[k]) != v:
            sys.exit(f"{what}: {k} is {obj.get(k)!r}, wanted {v!r}")


def main():
    cmd, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    doc = json.load(open(path))
    jobs = {j["job"]: j for j in doc["jobs"]}
    if cmd == "has":
        if args[0] not in jobs:
            sys.exit(f"no job {args[0]} in {sorted(jobs)}")
    elif cmd == "job":
        if args[0] not in jobs:
            sys.exit(f"no job {args[0]} in {sorted(jobs)}")
        fields_match(jobs[args[0]], args[1:], args[0])
    elif cmd == "host":
        hosts = {h["host"]: h for h in doc["hosts"]}
        if args[0] not in hosts:
            sys.exit(f"no host {args[0]} in {sorted(hosts)}")
        fields_match(hosts[args[0]], args[1:], args[0])
    elif cmd == "all":
        for j in doc["jobs"]:
            fields_match(j, args, j["job"])
    elif cmd == "states":
        for j in doc["jobs"]:
            if j["state"] not in args:
                sys.exit(f"{j['job']}: state {j['state']}, wanted one of {args}")
    elif cmd == "active":
        for j in doc["jobs"]:
            if j["state"] not in ACTIVE:
                sys.exit(f"{j['job']}: state {j['state']} is not active")
    elif cmd == "nodes":
        if jobs.get(args[0], {}).get("nodes") not in ("node1", "node2"):
            sys.exit(f"{args[0]}: nodes {jobs.get(args[0], {}).get('nodes')!r}")
    else:
        sys.exit(f"unknown check {cmd}")


main()
