#!/usr/bin/env python3
"""Turns a JMH JSON result file into Markdown tables: one row per benchmark method, one column per
peer (the `scheduler` / `queue` parameter), scores in millions of ops/s, and the ratio of our peer
(actorFair / mpscLinked) to the best other peer. Usage: jmh-to-markdown.py jmh.json"""
import json
import sys
from collections import OrderedDict

SCHED_PEERS = ["actorFair", "actorFifo", "parallel", "single", "boundedElastic", "fjp"]


def fmt(score, err):
    if score != score:  # NaN
        return "n/a"
    e = "" if err != err else " ± %.2f" % (err / 1e6)
    return "%.2f%s" % (score / 1e6, e)


def main(path):
    data = json.load(open(path))
    sched = OrderedDict()
    queues = OrderedDict()
    for r in data:
        name = r["benchmark"].rsplit(".", 2)
        cls, method = name[-2], name[-1]
        params = r.get("params", {})
        if "scheduler" in params:
            sched.setdefault((cls, method), {})[params["scheduler"]] = (
                r["primaryMetric"]["score"], r["primaryMetric"]["scoreError"])
        elif cls == "MailboxQueueBenchmark":
            key = (method, params.get("backoff", ""))
            q = params.get("queue", params.get("impl", "?"))
            sec = r.get("secondaryMetrics", {})
            for k, v in sec.items():
                if k.endswith("polls") or k.endswith("offers"):
                    queues.setdefault((key[0], key[1], k.split(":")[-1]), {})[q] = (v["score"], v["scoreError"])
    out = []
    if sched:
        out.append("| benchmark | " + " | ".join(SCHED_PEERS) + " | fair / best other | fair / parallel |")
        out.append("|---|" + "---:|" * (len(SCHED_PEERS) + 2))
        for (cls, method), peers in sched.items():
            cells = [fmt(*peers[p]) if p in peers else "–" for p in SCHED_PEERS]
            fair = peers.get("actorFair", (float("nan"), 0))[0]
            others = [v[0] for p, v in peers.items() if p not in ("actorFair", "actorFifo")]
            best = max(others) if others else float("nan")
            par = peers.get("parallel", (float("nan"), 0))[0]
            out.append("| `%s.%s` | %s | **%.2fx** | %.2fx |" % (cls, method, " | ".join(cells), fair / best, fair / par))
    if queues:
        names = sorted({q for v in queues.values() for q in v})
        ours = [n for n in names if "Linked" in n and "concurrent" not in n.lower()]
        out.append("")
        out.append("| group | backoff | counter | " + " | ".join(names) + " | ours / best other |")
        out.append("|---|---|---|" + "---:|" * (len(names) + 1))
        for (g, b, c), peers in sorted(queues.items()):
            cells = [fmt(*peers[n]) if n in peers else "–" for n in names]
            o = peers.get(ours[0], (float("nan"), 0))[0] if ours else float("nan")
            others = [v[0] for n, v in peers.items() if not ours or n != ours[0]]
            out.append("| %s | %s | %s | %s | %.2fx |" % (g, b, c, " | ".join(cells), o / max(others)))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
