#!/usr/bin/env python3
"""Issue 23's failover client: N concurrent streamed completions against a head (stdlib only).

  streams.py URL N MAX_TOKENS OUT.json [--kill PID --signal KILL|STOP --after CHUNKS]

Greedy for even sessions, seeded sampling for odd ones (the StageFailoverTest's bodies). With --kill,
sends the signal to PID once session 0 has CHUNKS chunks (and writes when, epoch ms, to OUT.json.kill). Writes each session's text, error and the
longest gap between its chunks (ms) to OUT.json."""
import json, os, signal, sys, threading, time, urllib.request

def body(i, max_tokens):
    b = {"model": "m", "prompt": "Session %d says once upon a time %s" % (i, "and then " * i),
         "max_tokens": max_tokens, "ignore_eos": True, "stream": True}
    b.update({"temperature": 0} if i % 2 == 0 else {"temperature": 0.9, "seed": 100 + i})
    return json.dumps(b).encode()

def stream(url, i, max_tokens, out, progress):
    r = {"text": "", "chunks": 0, "error": None, "gap_ms": 0.0}
    out[i] = r
    try:
        req = urllib.request.Request(url + "/v1/completions", data=body(i, max_tokens),
                                     headers={"Content-Type": "application/json"})
        last = None
        with urllib.request.urlopen(req, timeout=300) as res:
            for raw in res:
                line = raw.decode().strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                ev = json.loads(data)
                if "error" in ev:
                    r["error"] = json.dumps(ev["error"])
                    break
                for c in ev.get("choices", []):
                    if c.get("text"):
                        now = time.monotonic()
                        if last is not None:
                            r["gap_ms"] = max(r["gap_ms"], (now - last) * 1000)
                        last = now
                        r["text"] += c["text"]
                        r["chunks"] += 1
                        progress[i] = r["chunks"]
    except Exception as e:  # the record says what went wrong
        r["error"] = repr(e)

def main():
    url, n, max_tokens, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    opts = dict(zip(sys.argv[5::2], sys.argv[6::2]))
    out, progress = {}, {}
    threads = [threading.Thread(target=stream, args=(url, i, max_tokens, out, progress)) for i in range(n)]
    for t in threads:
        t.start()
    if "--kill" in opts:
        after = int(opts.get("--after", "6"))
        while progress.get(0, 0) < after and threads[0].is_alive():
            time.sleep(0.01)
        os.kill(int(opts["--kill"]), getattr(signal, "SIG" + opts.get("--signal", "KILL")))
        with open(path + ".kill", "w") as f:  # when the signal went (epoch ms), for the head's failover phases
            f.write("%d\n" % round(time.time() * 1000))
    for t in threads:
        t.join()
    with open(path, "w") as f:
        json.dump([out[i] for i in range(n)], f)

if __name__ == "__main__":
    main()
