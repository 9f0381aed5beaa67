#!/usr/bin/env python3
"""A small real training: data-parallel (DDP) over every node dispatch gives the job.

A two-layer network of a few hundred parameters learns a fixed linear map from
synthetic data, on CPU, with PyTorch's gloo backend (Debian 12's python3-torch 1.13).
Each node runs this once (dispatch's bootstrap); it spawns --procs-per-node workers
(torch.multiprocessing.spawn: Debian 12's torchrun 1.13 fails on Python 3.11). The
ranks and the rendezvous come from dispatch's variables: DISPATCH_NODE_RANK,
DISPATCH_NNODES, DISPATCH_MASTER_ADDR and DISPATCH_MASTER_PORT (MASTER_ADDR and
MASTER_PORT, when set, win, as torch's own launchers do).

Every rank prints its loss as it goes, and at the end the number of parameters and
a checksum of them (SHA-256 of their bytes): DDP averages the gradients of all ranks
at every step, so every rank of every node ends with the same parameters, and the
same checksum. Each rank trains on its own shard of the data.

A run that outlives its jobs (dispatch-submit(1) RUNS): with DISPATCH_CHECKPOINT_DIR
set, rank 0 writes a checkpoint there (model, optimizer, the RNG states of every rank,
the step) every --checkpoint-every steps and when the stop signal
(DISPATCH_STOP_SIGNAL) arrives, atomically (a temporary file renamed into place),
and a new attempt resumes from it: an interrupted run ends with the same checksum as
an uninterrupted one. --step-seconds stretches each step so that a short time limit
interrupts the training.
"""
import argparse
import hashlib
import os
import signal
import socket
import sys
import time

STOP = [False]


def stop_signal():
    name = os.environ.get("DISPATCH_STOP_SIGNAL")
    return getattr(signal, "SIG" + name, None) if name else None


def on_stop(signum, frame):
    STOP[0] = True


def env(name, default):
    return os.environ.get(name) or default


def say(line):
    """One write per line: the workers of a node share its output file."""
    os.write(1, (line + "\n").encode())


def checksum(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def worker(local, args, node, nnodes, addr, port, stopped):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    world = nnodes * args.procs_per_node
    rank = node * args.procs_per_node + local
    torch.set_num_threads(1)
    # PyTorch 2.4 and later ask their TCP store for libuv, which some builds lack
    # (Debian's): the plain TCP store works everywhere
    os.environ.setdefault("USE_LIBUV", "0")
    dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank,
                            world_size=world)
    torch.manual_seed(0)  # the same initial model everywhere (DDP also broadcasts it)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    truth = torch.Generator().manual_seed(1)
    w = torch.randn(16, 1, generator=truth)
    data = torch.Generator().manual_seed(100 + rank)  # this rank's shard
    nparams = sum(p.numel() for p in model.parameters())
    if rank == 0:
        say(f"world {world} ({nnodes} nodes x {args.procs_per_node}), gloo on "
            f"{addr}:{port}, {nparams} parameters")
    ckdir = os.environ.get("DISPATCH_CHECKPOINT_DIR")
    ckpt = os.path.join(ckdir, "train.pt") if ckdir else None
    first = 1
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt)
        if state["world"] != world:
            raise SystemExit(f"{ckpt} is of a world of {state['world']}, not {world}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"][rank])
        data.set_state(state["data_rng"][rank])
        first = state["step"] + 1
        if rank == 0:
            say(f"resumed from step {state['step']} (attempt "
                f"{os.environ.get('DISPATCH_ATTEMPT', '-')})")

    def save(step):
        # every rank's RNG states, to rank 0, which writes the file
        rngs = [None] * world
        dist.all_gather_object(rngs, (torch.get_rng_state(), data.get_state()))
        if rank == 0:
            tmp = f"{ckpt}.tmp{os.getpid()}"
            torch.save({"step": step, "world": world, "model": model.state_dict(),
                        "optimizer": opt.state_dict(),
                        "torch_rng": [r[0] for r in rngs],
                        "data_rng": [r[1] for r in rngs]}, tmp)
            os.replace(tmp, ckpt)
            say(f"checkpoint at step {step}")

    sig = stop_signal()
    if sig:
        signal.signal(sig, on_stop)
    stop = torch.zeros(1)
    for step in range(first, args.steps + 1):
        if args.step_seconds:
            time.sleep(args.step_seconds)
        x = torch.randn(args.batch, 16, generator=data)
        y = x @ w * 0.1
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1 or step % args.log_every == 0 or step == args.steps:
            say(f"node {node} rank {rank}: step {step}/{args.steps} loss {loss.item():.6f}")
        if ckpt and step < args.steps:
            # every rank stops at the same step: one of them got the signal
            # this worker's signal, or its parent's (the signal may come while
            # the worker starts, when it still ignores it)
            stop[0] = 1.0 if STOP[0] or stopped.is_set() else 0.0
            if sig:
                dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop[0] > 0 or (args.checkpoint_every and step % args.checkpoint_every == 0):
                save(step)
            if stop[0] > 0:
                if rank == 0:
                    say(f"stopped at step {step}: {os.environ.get('DISPATCH_STOP_SIGNAL')}")
                dist.barrier()
                dist.destroy_process_group()
                return
    say(f"node {node} rank {rank}: done on {socket.gethostname()}, {nparams} parameters, "
        f"checksum {checksum(model)}")
    dist.barrier()
    dist.destroy_process_group()


def main():
    sig = stop_signal()
    if sig:  # from the start: a stop before the workers run is not lost
        signal.signal(sig, on_stop)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--procs-per-node", type=int, default=2)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--checkpoint-every", type=int, default=50,
                   help="steps between checkpoints, with DISPATCH_CHECKPOINT_DIR (0: only "
                   "on the stop signal)")
    p.add_argument("--step-seconds", type=float, default=0,
                   help="sleep this long in each step (so a short time limit interrupts it)")
    args = p.parse_args()

    node = int(env("DISPATCH_NODE_RANK", "0"))
    nnodes = int(env("DISPATCH_NNODES", "1"))
    addr = env("MASTER_ADDR", env("DISPATCH_MASTER_ADDR", "localhost"))
    port = int(env("MASTER_PORT", env("DISPATCH_MASTER_PORT", "29500")))
    say(f"node {node}/{nnodes} on {socket.gethostname()}: job "
        f"{env('DISPATCH_JOB_ID', '-')}, master {addr}:{port}, gpus "
        f"{env('CUDA_VISIBLE_DEVICES', '-')} (CPU training: gloo), code in "
        f"{env('DISPATCH_CODE_DIR', '-')}")
    try:
        import torch.multiprocessing as mp
    except ImportError:
        print(f"node {node}: no PyTorch here (Debian 12: apt-get install python3-torch)",
              file=sys.stderr)
        return 1
    # The stop signal reaches this process and the workers: this one tells the
    # workers (they ignore it until their own handler is set); they checkpoint and end.
    stopped = mp.get_context("spawn").Event()
    sig = stop_signal()
    if sig:
        signal.signal(sig, signal.SIG_IGN)  # inherited by the workers as they start
    ctx = mp.start_processes(worker, args=(args, node, nnodes, addr, port, stopped),
                             nprocs=args.procs_per_node, join=False, start_method="spawn")
    if sig:
        signal.signal(sig, lambda signum, frame: stopped.set())
        if STOP[0]:  # it came before
            stopped.set()
    while not ctx.join():
        pass
    say(f"node {node}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
