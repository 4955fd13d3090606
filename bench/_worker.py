"""One implementation's benchmark process: `python -m bench._worker IMPL MAX_STEPS`.

It builds the episode once, checks every length it is asked for, then answers requests on stdin, one
JSON object a line, each with one JSON line on stdout:
`{"check": n}` -> `{"ok": true}`; `{"time": n, "loops": k}` -> `{"cpu": s, "wall": s}`, the seconds
of k episodes back to back: CPU time of this process (all its threads), and wall time. The parent
interleaves its requests across the implementations' processes.
"""

from __future__ import annotations

import gc
import json
import sys
import time

from bench._episodes import build


def serve(impl: str, max_steps: int) -> None:
    """Answer the parent's requests for `impl` until stdin closes."""
    answers = sys.stdout
    sys.stdout = sys.stderr  # whatever a library prints must not mix with the answers
    episode = build(impl, max_steps)
    for line in sys.stdin:
        request = json.loads(line)
        if "check" in request:
            episode.check(int(request["check"]))
            answer: dict[str, object] = {"ok": True}
        else:
            n, loops = int(request["time"]), int(request["loops"])
            gc.collect()  # start each sample from the same heap; the collector stays on while timing
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(loops):
                episode.run(n)
            answer = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}
        print(json.dumps(answer), file=answers, flush=True)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
