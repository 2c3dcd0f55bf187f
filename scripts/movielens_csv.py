#!/usr/bin/env python3
"""Writes MovieLens-100K as one CSV with side-feature columns, for `sketchlearn fm --columns`:

    user,item,rating,timestamp,age,gender,occupation,genres,year

from `u.data` (ratings, in the file's order), `u.user` (age, gender, occupation) and `u.item`
(the 19 genre flags as `Action|Comedy`, the release year; latin-1). Usage:

    scripts/movielens_csv.py [DATA_DIR] [OUT]

DATA_DIR holds movielens100k.tsv, movielens100k_users.psv and movielens100k_items.psv
(default ../shared/data); OUT defaults to standard output.
"""

import sys
from pathlib import Path

GENRES = [
    "unknown",
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
]


def records(path):
    """The `|`-separated records of a MovieLens side file (latin-1), by id."""
    text = Path(path).read_bytes().decode("latin-1")
    return {
        f[0]: f for f in (line.split("|") for line in text.splitlines() if line.strip())
    }


def main():
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", newline="\n") as out:
            write_csv(data, out)
    else:
        write_csv(data, sys.stdout)


def write_csv(data, out):
    """The joined ratings of the MovieLens files under `data`, as CSV into `out`."""
    users = records(data / "movielens100k_users.psv")
    items = records(data / "movielens100k_items.psv")
    out.write("user,item,rating,timestamp,age,gender,occupation,genres,year\n")
    for line in (data / "movielens100k.tsv").read_text().splitlines():
        if not line.strip():
            continue
        user, item, rating, timestamp = line.split()[:4]
        u, i = users[user], items[item]
        genres = "|".join(
            g for g, flag in zip(GENRES, i[-len(GENRES) :]) if flag.strip() == "1"
        )
        year = (
            i[2].rsplit("-", 1)[-1].strip()
        )  # empty (missing) for the one undated item
        out.write(
            f"{user},{item},{rating},{timestamp},{u[1]},{u[2]},{u[3]},{genres},{year}\n"
        )


if __name__ == "__main__":
    main()
