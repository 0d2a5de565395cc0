#!/usr/bin/env python3
"""tools/stages/failover.sh's arithmetic (stdlib only).

  failover_report.py kill REFERENCE.json KILLED.json HEAD.log K AFTER_CHUNKS RECOMPUTED
      one line for one kill: longest gap, tokens recomputed, texts equal, and the head's failover phases
      (its "failover phases:" log line, measured from the moment streams.py sent the signal)
  failover_report.py summary REFERENCE.json KILLS.txt SIGNAL LOAD
      the summary line: p50/p90/p99/max of the longest gaps (nearest rank), the failure-free baseline"""
import json, math, re, sys


def kill_line(ref_path, got_path, log_path, k, after, recomputed):
    ref, got = json.load(open(ref_path)), json.load(open(got_path))
    errors = [g["error"] for g in got + ref if g["error"]]
    equal = all(r["text"] == g["text"] for r, g in zip(ref, got)) and len(ref) == len(got) and not errors
    line = "kill %s after %s chunks of session 0: longest gap %.0f ms, %s tokens recomputed, texts equal: %s" % (
        k, after, max(g["gap_ms"] for g in got), recomputed, "yes" if equal else "no")
    try:
        killed_at = int(open(got_path + ".kill").read())
    except (OSError, ValueError):
        killed_at = None
    phases = [m for m in (re.search(
        r"failover phases: stage \S+ \((.*?)\) detected at epoch ms (\d+); taken up \+(\d+) ms; (\d+) sessions moved to \S+,"
        r" (\d+) rows replayed, sent \+(\d+) ms; first next token \+(\d+) ms, last \+(\d+) ms", l)
        for l in open(log_path, errors="replace")) if m]
    if phases and killed_at is not None:
        reason, detected, taken, moved, rows, sent, first, last = phases[0].groups()
        line += ("; phases: detected +%d ms (%s), taken up +%s, replay of %s rows (%s sessions) sent +%s,"
                 " first next token +%s, last +%s ms after detection") % (
            int(detected) - killed_at, reason.split(":")[0], taken, rows, moved, sent, first, last)
    else:
        line += "; phases: none logged"
    if errors:
        line += "; errors: " + "; ".join(errors)
    return line


def nearest_rank(sorted_values, q):
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def summary(ref_path, kills_path, signal, load):
    ref = json.load(open(ref_path))
    # A kill that moved no session (the sessions were not on the killed stage) measured nothing.
    all_lines = open(kills_path).read().splitlines()
    lines = [l for l in all_lines if not (" 0 tokens recomputed" in l and "phases: none logged" in l)]
    missed = len(all_lines) - len(lines)
    gaps = sorted(float(re.search(r"longest gap (\d+) ms", l).group(1)) for l in lines)
    recomputed = [int(re.search(r"(-?\d+) tokens recomputed", l).group(1)) for l in lines]
    unequal = sum(1 for l in lines if "texts equal: yes" not in l)
    detect = sorted(int(m.group(1)) for m in (re.search(r"detected \+(-?\d+) ms", l) for l in lines) if m)
    last = sorted(int(m.group(1)) for m in (re.search(r"last \+(\d+) ms after detection", l) for l in lines) if m)
    if not gaps:
        print("failover: no kills measured")
        return
    print("failover: %d kills (SIG%s), longest gap p50 %.0f ms p90 %.0f ms p99 %.0f ms max %.0f ms; failure-free run's longest gap %.0f ms;"
          " tokens recomputed median %d; texts equal %d/%d; detection p50 %s ms max %s ms; detection to last next token p50 %s ms;"
          " load average at end %s%s" % (
              len(gaps), signal, nearest_rank(gaps, .5), nearest_rank(gaps, .9), nearest_rank(gaps, .99), gaps[-1],
              max(r["gap_ms"] for r in ref), sorted(recomputed)[len(recomputed) // 2], len(lines) - unequal, len(lines),
              detect[len(detect) // 2] if detect else "?", detect[-1] if detect else "?",
              last[len(last) // 2] if last else "?", load,
              "" if not missed else "; %d kills moved no session and are left out" % missed))


if __name__ == "__main__":
    if sys.argv[1] == "kill":
        print(kill_line(*sys.argv[2:8]))
    else:
        summary(*sys.argv[2:6])
