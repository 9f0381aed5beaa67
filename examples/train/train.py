#!/usr/bin/env python3
"""A tiny stand-in for a training script: what a real one would see on each node.

It prints where it runs (node rank, master address, GPUs) and a few fake epochs, so
that `dispatch submit-packed --repo examples/train` shows the whole path end to end:
the code travels with the job, the bootstrap gives every node its rank, SLURM gives
it its GPUs. Standard library only.
"""
import argparse
import math
import os
import socket
import sys
import time


def env(name, default="-"):
    return os.environ.get(name, default)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--sleep", type=float, default=0.2, help="seconds per epoch")
    args = p.parse_args()

    rank = int(env("DISPATCH_NODE_RANK", "0"))
    print(
        f"node {rank}/{env('DISPATCH_NNODES', '1')} on {socket.gethostname()}: "
        f"job {env('DISPATCH_JOB_ID')}, master {env('DISPATCH_MASTER_ADDR')}:"
        f"{env('DISPATCH_MASTER_PORT')}, gpus {env('CUDA_VISIBLE_DEVICES')} "
        f"({env('DISPATCH_GPUS_PER_NODE')} per node), code in {env('DISPATCH_CODE_DIR')}",
        flush=True,
    )
    loss = 2.0
    for epoch in range(1, args.epochs + 1):
        time.sleep(args.sleep)
        loss *= math.exp(-args.lr * (1 + rank / 10))
        print(f"node {rank}: epoch {epoch}/{args.epochs} loss {loss:.4f}", flush=True)
    print(f"node {rank}: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
