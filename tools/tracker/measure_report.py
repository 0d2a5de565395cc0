"""Prints measure.sh's figures: each node's saturation point, then per level and policy output tokens/s,
TTFT p50/p99 and requests per node, and the goal verdict (capacity's TTFT p99 >= 15% below round-robin's at
equal or better output throughput, at every level). With several repeats every run is printed and the
verdict is judged on all of a level's requests together (throughput: total tokens over total time)."""
import json
import math
import sys
from collections import Counter

out, levels, repeats = sys.argv[1], [int(c) for c in sys.argv[2].split(",")], int(sys.argv[3])


def pct(values, p):
    v = sorted(values)
    return v[max(0, math.ceil(p / 100 * len(v)) - 1)] if v else float("nan")


def run(policy, c, rep):
    """(ttfts ms, output tokens, seconds, failed, requests by node) of one bench run, or None."""
    try:
        d = json.load(open(f"{out}/{policy}-c{c}-r{rep}/bench-result.json"))
    except (OSError, ValueError):
        return None
    r = d["runs"][0]
    level = next(l for l in r["levels"] if l["concurrency"] == c)
    reqs = [q for q in r["requests"] if q["level"] == level["label"] and not q["probe"]]
    ttfts = [q["ttft_ms"] for q in reqs if q["error"] is None and q["ttft_ms"] is not None]
    nodes = Counter((q.get("served_by") or "?").replace("127.0.0.1:18101", "A").replace("127.0.0.1:18102", "B")
                    for q in reqs)
    return ttfts, level["total_output_tokens"], level["duration_s"], level["failed"], nodes


for n in ("a", "b"):
    r = json.load(open(f"{out}/sat-{n}/saturation.json"))["recommendations"][0]
    print(f"node {n.upper()} ({r['engine']}, 1 thread): recommended_max_concurrency {r['recommended_max_concurrency']}, "
          f"{r['expected_output_throughput']:.1f} tok/s total, {r['expected_per_session_output_throughput']:.1f} tok/s "
          f"per session; tested {r['concurrency_tested']} -> {[round(x) for x in r['output_throughput_tested']]} tok/s")

met = True
for c in levels:
    merged = {}
    for policy in ("capacity", "round-robin"):
        ttfts, tokens, seconds, failed, nodes = [], 0, 0.0, 0, Counter()
        for rep in range(1, repeats + 1):
            got = run(policy, c, rep)
            if got is None:
                print(f"c={c} {policy} run {rep}: no result (see {out}/bench-{policy}-c{c}-r{rep}.log)")
                continue
            t, tok, sec, f, nd = got
            if repeats > 1:
                print(f"  c={c} {policy} run {rep}: {tok / sec:.1f} tok/s, TTFT p50/p99 {pct(t, 50):.0f}/{pct(t, 99):.0f} ms, "
                      f"{len(t)} done, {f} failed")
            ttfts += t; tokens += tok; seconds += sec; failed += f; nodes += nd
        merged[policy] = (ttfts, tokens / seconds if seconds else float("nan"), failed, nodes)
    (ct, cx, cf, cn), (rt, rx, rf, rn) = merged["capacity"], merged["round-robin"]
    cp, rp = pct(ct, 99), pct(rt, 99)
    better = (rp - cp) / rp * 100 if rp else float("nan")
    ok = better >= 15 and cx >= rx and cf == 0
    met &= ok
    split = lambda n: "/".join(f"{k}:{v}" for k, v in sorted(n.items()))
    print(f"c={c}: capacity {cx:.1f} tok/s, TTFT p50/p99 {pct(ct, 50):.0f}/{cp:.0f} ms ({len(ct)} done, {cf} failed, {split(cn)})"
          f" | round-robin {rx:.1f} tok/s, TTFT p50/p99 {pct(rt, 50):.0f}/{rp:.0f} ms ({len(rt)} done, {rf} failed, {split(rn)})"
          f" | capacity p99 {better:+.0f}% better, throughput {(cx / rx - 1) * 100:+.0f}%: {'goal met' if ok else 'GOAL MISSED'}")
print("goal (capacity p99 TTFT >= 15% below round-robin at equal or better throughput, every level):",
      "met" if met else "MISSED")
