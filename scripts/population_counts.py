#!/usr/bin/env python3
"""Population counters over whole builds: every class of templates/population.py, per language.

    python3 scripts/population_counts.py runs/arab-west runs/asia-west runs/south-america-west
    python3 scripts/population_counts.py --examples 5 runs/arab-west     # a few prompts of each class

Prints, per class, the prompts counted in each language summed over the runs given (each a run directory
with build/, or a benchmark directory), and the total; exit 0 whatever the counts (the slow test
tests/templates/test_population.py is the gate).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    from factatlas.templates import population as pop

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--examples", type=int, default=0, help="show N prompts of each class per language")
    args = parser.parse_args(argv)
    totals: dict[str, Counter] = {name: Counter() for name in pop.COUNTERS}
    totals["subject_is_gold (kept)"] = Counter()
    examples: dict[tuple[str, str], list] = {}
    langs: set[str] = set()
    for run in args.runs:
        rows, entities = pop.read_build(run)
        langs |= {r["lang"] for r in rows}
        found = {
            "subject_candidates": pop.subject_candidates(rows),
            "subject_is_gold (kept)": pop.subject_candidates(rows, golds=True),
            "present_of_dead": pop.present_of_dead(rows, entities),
            "undeclined_after_preposition": pop.undeclined_after_preposition(rows),
        }
        for name, per_lang in found.items():
            for lang, hits in per_lang.items():
                totals[name][lang] += len(hits)
                examples.setdefault((name, lang), []).extend(hits[:args.examples])
        for lang, c in pop.mixed_locale(rows).items():
            totals["mixed_locale"][lang] += c["prompts"]
            for where in ("text", "gold", "candidate"):
                totals[f"mixed_locale:{where}"] = totals.get(f"mixed_locale:{where}", Counter())
                totals[f"mixed_locale:{where}"][lang] += c[where]
        if args.examples:
            for (lang, form), n in pop.mixed_locale_examples(rows).most_common():
                examples.setdefault(("mixed_locale", lang), []).append(f"{form} x{n}")
    order = sorted(langs)
    print("class".ljust(30) + "".join(lang.rjust(6) for lang in order) + "total".rjust(8))
    for name, c in totals.items():
        print(name.ljust(30) + "".join(str(c[lang]).rjust(6) for lang in order) + str(sum(c.values())).rjust(8))
    for (name, lang), hits in sorted(examples.items()):
        for h in hits[:args.examples]:
            print(f"  {name} {lang}: {h}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
