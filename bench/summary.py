#!/usr/bin/env python3
"""The benches' comparison rows: one JSON object per line, one line per row.

  summary.py row --file ROWS --bench B --what W --unit U --better higher|lower
                 --sluice "V V V" --peer-name NAME --peer "V V V"
                 --burst X --memory X --isa X --statistic X [--differs TEXT]
                 [--sluice-label TEXT]
      Appends one row. Each side is its per-round figures (one per round; a
      callgrind count is one figure). The row stores min / median / max of
      each side and the ratio of the medians, sluice / peer, and says whether
      sluice is ahead, level (within 2%) or behind given which way is better.
      A side with no figure, or a figure that is not a number, fails (exit 2):
      a peer that did not run is not a row.
  summary.py row ... --no-peer REASON   (instead of --peer-name and --peer)
      A figure that has no peer to stand beside (bench/statseg's scrape:
      DPDK serves no Prometheus endpoint); REASON says why. Its ratio and
      verdict are "no peer".
  summary.py table [--compact] ROWS...   the rows as one markdown table
      (--compact: medians with the range, without the matched properties)
  summary.py json ROWS... [--meta K=V ...]   the rows and the run's facts as
      one JSON document

Four things make a comparison like for like: the burst (objects per call),
the memory mode (2 MB hugepages or 4 KB pages), the instruction-set baseline
each side was compiled for, and the statistic (mean of a pass, median of
chunks, instruction count). A row names all four, and --differs says what
is not the same on both sides (the matched row is then printed beside it).
"""
import argparse
import json
import math
import statistics
import sys


def figures(text, what):
    vals = []
    for tok in text.replace(",", " ").split():
        try:
            v = float(tok)
        except ValueError:
            sys.exit(f"summary.py: {what}: '{tok}' is not a figure")
        if math.isnan(v) or math.isinf(v):
            sys.exit(f"summary.py: {what}: '{tok}' is not a figure")
        vals.append(v)
    if not vals:
        sys.exit(f"summary.py: {what}: no figure (did it run?)")
    return vals


def side(vals):
    return {"values": vals, "min": min(vals), "median": statistics.median(vals), "max": max(vals)}


def row_without_peer(a, s):
    return {
        "bench": a.bench, "what": a.what, "unit": a.unit, "better": a.better,
        "sluice": dict(s, label=a.sluice_label or "sluice"),
        "peer": {"name": f"none ({a.no_peer})", "values": [], "min": None, "median": None, "max": None},
        "ratio": None, "paired_ratio": None, "advantage": None, "verdict": "no peer",
        "matched": {"burst": a.burst, "memory": a.memory, "isa": a.isa, "statistic": a.statistic},
        "differs": a.differs or "",
    }


def cmd_row(a):
    s = side(figures(a.sluice, f"{a.bench} / {a.what}: sluice"))
    if a.no_peer:
        with open(a.file, "a") as f:
            f.write(json.dumps(row_without_peer(a, s)) + "\n")
        return
    if a.peer is None or a.peer_name is None:
        sys.exit(f"summary.py: {a.bench} / {a.what}: --peer-name and --peer, or --no-peer REASON")
    p = side(figures(a.peer, f"{a.bench} / {a.what}: {a.peer_name}"))
    if p["median"] == 0:
        sys.exit(f"summary.py: {a.bench} / {a.what}: {a.peer_name}'s median is 0")
    ratio = s["median"] / p["median"]
    paired = None
    if a.paired:
        if len(s["values"]) != len(p["values"]):
            sys.exit(f"summary.py: {a.bench} / {a.what}: --paired needs one figure per round on each side")
        paired = statistics.median(x / y for x, y in zip(s["values"], p["values"]))
    # Paired rounds (the two sides run back to back) judge by the median of
    # the per-round ratios: where the box's speed changes between rounds
    # (two vCPUs that move between cores), medians of each side may come
    # from different modes and flatter either side.
    judged = paired if paired is not None else ratio
    adv = judged if a.better == "higher" else (1 / judged if judged else math.inf)
    verdict = "level" if abs(adv - 1) <= 0.02 else ("ahead" if adv > 1 else "behind")
    row = {
        "bench": a.bench, "what": a.what, "unit": a.unit, "better": a.better,
        "sluice": dict(s, label=a.sluice_label or "sluice"),
        "peer": dict(p, name=a.peer_name),
        "ratio": ratio, "paired_ratio": paired, "advantage": adv, "verdict": verdict,
        "matched": {"burst": a.burst, "memory": a.memory, "isa": a.isa, "statistic": a.statistic},
        "differs": a.differs or "",
    }
    with open(a.file, "a") as f:
        f.write(json.dumps(row) + "\n")


def load(paths):
    rows = []
    for p in paths:
        try:
            with open(p) as f:
                rows += [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            pass
    return rows


def num(x):
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def mmm(s):
    if s["median"] is None:
        return "–"
    if s["min"] == s["max"]:
        return num(s["median"])
    return f"{num(s['min'])} / **{num(s['median'])}** / {num(s['max'])}"


def ratio_cell(r):
    if r["ratio"] is None:
        return "–"
    p = r.get("paired_ratio")
    return f"{r['ratio']:.3g}" + (f" (paired rounds: {p:.3g})" if p is not None else "")


def cmd_compact(rows):
    """One line per row without the matched properties (docs/benchmarks.md
    says how each family matches them): for the README."""
    print("| bench | measure | unit (better) | sluice median (min–max) | peer | peer median (min–max) "
          "| sluice / peer | sluice is | differs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        label = r["sluice"]["label"]
        what = r["what"] if label == "sluice" else f"{r['what']} ({label})"
        cell = lambda x: "–" if x["median"] is None else \
            num(x["median"]) + ("" if x["min"] == x["max"] else f" ({num(x['min'])}–{num(x['max'])})")
        print(f"| {r['bench']} | {what} | {r['unit']} ({r['better']}) | {cell(r['sluice'])} | {r['peer']['name']} "
              f"| {cell(r['peer'])} | {ratio_cell(r)} | {r['verdict']} | {r['differs'] or 'nothing'} |")


def cmd_table(a):
    rows = load(a.rows)
    if a.compact:
        return cmd_compact(rows)
    print("| bench | measure | unit (better) | sluice min / median / max | peer | peer min / median / max "
          "| ratio of medians (sluice / peer) | sluice is | burst · memory · ISA · statistic | differs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m = r["matched"]
        label = r["sluice"]["label"]
        what = r["what"] if label == "sluice" else f"{r['what']} ({label})"
        print(f"| {r['bench']} | {what} | {r['unit']} ({r['better']}) | {mmm(r['sluice'])} | {r['peer']['name']} "
              f"| {mmm(r['peer'])} | {ratio_cell(r)} | {r['verdict']} "
              f"| {m['burst']} · {m['memory']} · {m['isa']} · {m['statistic']} | {r['differs'] or 'nothing'} |")
    behind = [r for r in rows if r["verdict"] == "behind"]
    if behind:
        print(f"\nsluice is behind its peer in {len(behind)} of {len(rows)} rows:")
        for r in behind:
            print(f"- {r['bench']}: {r['what']} ({r['sluice']['label']}): {num(r['sluice']['median'])} vs "
                  f"{r['peer']['name']} {num(r['peer']['median'])} {r['unit']}")


def cmd_json(a):
    meta = dict(kv.split("=", 1) for kv in a.meta or [])
    json.dump({"meta": meta, "rows": load(a.rows)}, sys.stdout, indent=1)
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("row")
    r.add_argument("--file", required=True)
    for k in ("bench", "what", "unit", "sluice", "burst", "memory", "isa", "statistic"):
        r.add_argument("--" + k, required=True)
    r.add_argument("--peer-name")
    r.add_argument("--peer")
    r.add_argument("--no-peer", default="", metavar="REASON")
    r.add_argument("--better", required=True, choices=("higher", "lower"))
    r.add_argument("--differs", default="")
    r.add_argument("--sluice-label", default="")
    r.add_argument("--paired", action="store_true",
                   help="the i-th figures of the two sides were measured back to back: also the median "
                        "of the per-round ratios, which then decides the verdict")
    t = sub.add_parser("table")
    t.add_argument("rows", nargs="+")
    t.add_argument("--compact", action="store_true")
    j = sub.add_parser("json")
    j.add_argument("rows", nargs="+")
    j.add_argument("--meta", action="append")
    a = ap.parse_args()
    {"row": cmd_row, "table": cmd_table, "json": cmd_json}[a.cmd](a)


if __name__ == "__main__":
    main()
