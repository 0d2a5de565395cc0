#!/usr/bin/env python3
"""A node kill -9ed during a c=N run through a dgr tracker (docs/tracker.md, "Measured").

Runs N concurrent streams (fixed prompts and seeds) through the tracker twice: once failure-free, once
killing the given node process with SIGKILL after --kill-after seconds. Prints streams completed, client
errors, the longest gap each client saw between two chunks, and whether every text equals the
failure-free run's. Usage: failover.py --tracker http://127.0.0.1:18100 --model M --kill-pid PID
"""
import argparse, http.client, json, os, signal, threading, time, urllib.parse


def stream(url, model, seed, max_tokens, out, progress):
    u = urllib.parse.urlparse(url)
    body = json.dumps({"model": model, "prompt": f"Story {seed}: once upon a time", "max_tokens": max_tokens,
                       "stream": True, "ignore_eos": True, "temperature": 0.8, "seed": seed})
    rec = {"text": "", "gaps": [], "error": None, "done": False, "chunks": 0}
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            rec["error"] = f"HTTP {r.status}: {r.read()[:200]!r}"
        last = None
        while rec["error"] is None:
            line = r.readline()
            if not line:
                break
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            now = time.monotonic()
            if line == "data: [DONE]":
                rec["done"] = True
                break
            ev = json.loads(line[6:])
            if "error" in ev:
                rec["error"] = ev["error"].get("message")
                break
            if last is not None:
                rec["gaps"].append(now - last)
            last = now
            rec["chunks"] += 1
            progress[seed] = rec["chunks"]
            rec["text"] += ev["choices"][0].get("text", "")
    except Exception as e:  # a broken connection is a client error
        rec["error"] = repr(e)
    out[seed] = rec


def run(args, kill_pid=None, max_tokens=None):
    out = {}
    progress = {}
    threads = [threading.Thread(target=stream, args=(args.tracker, args.model, s, max_tokens or args.max_tokens, out, progress))
               for s in range(args.clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    if kill_pid:
        # Mid-stream for every client: once each has received --kill-after-tokens chunks (or --kill-after s passed).
        while time.monotonic() - t0 < args.kill_after and (
                len(progress) < args.clients or min(progress.values()) < args.kill_after_tokens):
            time.sleep(0.01)
        os.kill(kill_pid, signal.SIGKILL)
        print(f"killed pid {kill_pid} at {time.monotonic() - t0:.2f} s, clients had {sorted(progress.values())} chunks")
    for t in threads:
        t.join()
    return out, time.monotonic() - t0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracker", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--kill-pid", type=int, required=True)
    ap.add_argument("--kill-after", type=float, default=30.0, help="kill at the latest after this many seconds")
    ap.add_argument("--kill-after-tokens", type=int, default=16, help="kill once every client has this many chunks")
    args = ap.parse_args()
    run(args, max_tokens=16, kill_pid=None)  # warm-up: both nodes' JIT, so the reference run's gaps are not compile pauses
    ref, t_ref = run(args)
    got, t_got = run(args, args.kill_pid)
    completed = sum(1 for r in got.values() if r["done"] and r["error"] is None)
    errors = sum(1 for r in got.values() if r["error"] is not None or not r["done"])
    max_gaps = [max(r["gaps"]) if r["gaps"] else 0.0 for r in got.values()]
    all_gaps = [g for r in got.values() for g in r["gaps"]]
    ref_gaps = [g for r in ref.values() for g in r["gaps"]]
    equal = sum(1 for s in ref if ref[s]["text"] == got[s]["text"] and ref[s]["error"] is None)
    print(json.dumps({
        "clients": args.clients, "max_tokens": args.max_tokens,
        "failure_free": {"seconds": round(t_ref, 2), "errors": sum(1 for r in ref.values() if r["error"]),
                         "gap_p99_s": round(pct(ref_gaps, 99), 3), "gap_max_s": round(max(ref_gaps), 3)},
        "with_kill": {"seconds": round(t_got, 2), "streams_completed": completed, "client_errors": errors,
                      "longest_gap_per_client_s": [round(g, 3) for g in max_gaps],
                      "longest_gap_p99_s": round(pct(max_gaps, 99), 3), "gap_p99_s": round(pct(all_gaps, 99), 3),
                      "texts_equal_failure_free": f"{equal}/{args.clients}",
                      "errors": [r["error"] for r in got.values() if r["error"]]},
    }, indent=1))
    print(f"streams completed: {completed}/{args.clients}")
    print(f"client errors: {errors} (goal 0)")
    print(f"longest gap a client saw, p99 over clients: {pct(max_gaps, 99):.2f} s (goal <= 2 s: "
          f"{'met' if pct(max_gaps, 99) <= 2 else 'MISSED'}); max {max(max_gaps):.2f} s; failure-free run's longest gap"
          f" {max(ref_gaps):.2f} s")
    print(f"texts equal to the failure-free run: {equal}/{args.clients}")


if __name__ == "__main__":
    main()
