"""The 12 shared binary sets of `docs/results/auto.md` (read in file order; the `.shuf` copies of
the class-sorted files, as `../shared/data/MANIFEST.md` advises) and where `../shared/data` is,
for the measurement scripts that run the default over them."""

from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

AUTO12 = [
    "australian",
    "breast-cancer",
    "diabetes",
    "heart",
    "ionosphere",
    "splice",
    "mushrooms",
    "a9a",
    "w8a.shuf",
    "magic04.shuf",
    "spam.shuf",
    "r8_earn_vs_rest",
]
