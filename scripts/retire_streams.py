"""The default's error, retirement points and CPU on generated streams (docs/results/speed.md,
branch retire18): for each stream name of $STREAMS (default: the nine of that section) it runs
`BIN train --quiet --json [ARGS] WORK/NAME.libsvm` once and prints the tag, the stream, the
examples, the progressive error, each retired member as `k@t`, and the child's user + sys CPU.
The streams are scripts/bench_speed.py's `generate_sparse` (see the section for the command).

    python3 scripts/retire_streams.py TAG BIN WORK [ARGS ...]
"""

import json
import os
import resource
import subprocess
import sys

DEFAULT = "g20_20_s1 g20_20_s2 g20_20_s3 g20_20_s4 g20_20_s5 g20_20_s6 g19_20_s1 g19_20_s2 g18_50_s27"


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    tag, binary, work, *args = sys.argv[1:]
    for f in os.environ.get("STREAMS", DEFAULT).split():
        before = cpu()
        cmd = [binary, "train", "--quiet", "--json", *args, f"{work}/{f}.libsvm"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        spent = cpu() - before
        j = json.loads(out)
        mixture = j.get("mixture") or []
        ret = " ".join(
            f"{k}@{m.get('retired_at')}"
            for k, m in enumerate(mixture)
            if m.get("retired")
        )
        err = j["progressive_error"]
        print(
            tag,
            f,
            j["examples"],
            f"{err:.6f}",
            ret or "-",
            f"cpu={spent:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
