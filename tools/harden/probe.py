#!/usr/bin/env python3
"""Issue 29's listener and memory figures against a running `dgr serve` (see measure.sh).

Prints plain lines: flood over the connection cap (time to refusal), request-line trickle (time to cut),
RSS idle / during a 64-stream storm / after it. Standard library only; every socket it opens it closes.
"""
import argparse, http.client, json, selectors, socket, statistics, sys, threading, time

def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")

def get(port, path, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()

def metric(port, name):
    _, body = get(port, "/metrics")
    total = 0.0
    for line in body.splitlines():
        if line.startswith(name) and (len(line) == len(name) or line[len(name)] in " {"):
            total += float(line.rsplit(" ", 1)[1])
    return total

def wait_health(port, seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            if get(port, "/health", 2)[0] == 200:
                return time.time()
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("node not healthy within %d s" % seconds)

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")

def flood(port, n, cap):
    """n connections opened at once, each sending GET /health: time from connect to the first answer byte."""
    sel = selectors.DefaultSelector()
    req = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    conns = []
    t0 = time.time()
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        st = {"sock": s, "start": time.time(), "sent": False, "first": None, "status": None, "buf": b""}
        conns.append(st)
        sel.register(s, selectors.EVENT_WRITE | selectors.EVENT_READ, st)
    deadline = time.time() + 60
    pending = n
    while pending and time.time() < deadline:
        for key, ev in sel.select(timeout=0.5):
            st = key.data
            s = st["sock"]
            if ev & selectors.EVENT_WRITE and not st["sent"]:
                try:
                    s.send(req)
                except OSError:
                    pass
                st["sent"] = True
                sel.modify(s, selectors.EVENT_READ, st)
                continue
            if ev & selectors.EVENT_READ:
                try:
                    d = s.recv(4096)
                except OSError:
                    d = b""
                if st["first"] is None:
                    st["first"] = time.time()
                    st["status"] = d[9:12].decode() if d.startswith(b"HTTP/1.1 ") else ("closed" if not d else "other")
                    pending -= 1
                    sel.unregister(s)
    flood_s = time.time() - t0
    served = [c for c in conns if c["status"] == "200"]
    refused = [c for c in conns if c["status"] == "503"]
    other = [c for c in conns if c["status"] not in ("200", "503")]
    waits = [c["first"] - c["start"] for c in refused]
    print(f"flood: {n} connections at once, cap {cap}: {len(served)} served (200), {len(refused)} refused (503), "
          f"{len(other)} other (reset/none within 60 s); all answered in {flood_s:.2f} s")
    if waits:
        print(f"flood: time to refusal p50 {pct(waits,50)*1000:.0f} ms, p99 {pct(waits,99)*1000:.0f} ms, max {max(waits)*1000:.0f} ms")
    t = time.time()
    for c in conns:
        c["sock"].close()
    sel.close()
    back = wait_health(port, 60)
    print(f"flood: /health 200 again {1000*(back - t):.0f} ms after the flood's sockets closed")

def trickle(port, n, header_timeout):
    """n connections each sending its request line one byte per 0.5 s: time from the first byte to the cut."""
    results = [None] * n
    def one(i):
        s = socket.create_connection(("127.0.0.1", port))
        line = b"GET /health?" + b"a" * 400
        t0 = time.time()
        try:
            s.settimeout(0.5)
            for b in line:
                s.send(bytes([b]))
                try:
                    s.recv(1)  # returns at all (an answer, or the close) only once the server cut the connection
                    results[i] = time.time() - t0
                    return
                except socket.timeout:
                    continue
            results[i] = None
        except OSError:
            results[i] = time.time() - t0
        finally:
            s.close()
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
    cut = [r for r in results if r is not None]
    print(f"trickle: {n} request lines sent a byte per 0.5 s: {len(cut)} cut; time to cut p50 {pct(cut,50):.1f} s, "
          f"max {max(cut) if cut else float('nan'):.1f} s (header timeout {header_timeout})")

def storm(port, pid, streams, tokens, model):
    peak = [rss_mib(pid)]
    done = threading.Event()
    def sample():
        while not done.is_set():
            peak.append(rss_mib(pid))
            time.sleep(0.1)
    got = [0] * streams
    def one(i):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        body = json.dumps({"model": model, "prompt": "Once upon a time %d" % i, "max_tokens": tokens,
                           "stream": True, "ignore_eos": True})
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        for line in r:
            if line.startswith(b"data: {"):
                got[i] += 1
        c.close()
    sampler = threading.Thread(target=sample); sampler.start()
    t0 = time.time()
    ts = [threading.Thread(target=one, args=(i,)) for i in range(streams)]
    for t in ts: t.start()
    for t in ts: t.join()
    took = time.time() - t0
    done.set(); sampler.join()
    print(f"storm: {streams} streams x {tokens} tokens: {sum(got)} chunks in {took:.1f} s; RSS peak {max(peak):.0f} MiB")
    return max(peak)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--model", default="llama-tiny-Q4_0")
    ap.add_argument("--cap", type=int, default=256)
    ap.add_argument("--flood", type=int, default=3000)
    ap.add_argument("--trickle", type=int, default=50)
    ap.add_argument("--header-timeout", default="10s")
    ap.add_argument("--after", type=int, default=45, help="seconds to wait after the storm before the last RSS")
    ap.add_argument("--only", default="flood,trickle,rss")
    a = ap.parse_args()
    wait_health(a.port, 180)
    only = a.only.split(",")
    if "rss" in only:
        time.sleep(5)
        idle = rss_mib(a.pid)
        print(f"rss: idle {idle:.0f} MiB")
        storm(a.port, a.pid, 64, 200, a.model)
        time.sleep(a.after)
        print(f"rss: {a.after} s after the storm {rss_mib(a.pid):.0f} MiB (dgr_state_bytes_pooled "
              f"{metric(a.port, 'dgr_state_bytes_pooled')/2**20:.0f} MiB)")
    if "flood" in only:
        flood(a.port, a.flood, a.cap)
    if "trickle" in only:
        trickle(a.port, a.trickle, a.header_timeout)
    print(f"listener: dgr_connections_refused_total {metric(a.port, 'dgr_connections_refused_total'):.0f}, "
          f"dgr_listener_restarts_total {metric(a.port, 'dgr_listener_restarts_total'):.0f}")

if __name__ == "__main__":
    main()
