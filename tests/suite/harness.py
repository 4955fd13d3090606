"""A harness in Python for the protocol tests: `python -m tests.suite.harness [--break HOW]`.

It drives the reference ReAct through the reference binding in `conformance._isolate`'s worker,
so every model answer and every tool call crosses the process boundary to the suite, as in any
other language: the verdicts must equal the in-process reference binding's. `--break` makes it
misbehave the ways a real harness can: `invalid-json` (a line that is not JSON), `bad-message`
(JSON that is not a protocol message), `crash` (exits in the middle of a call), `stall` (never
replies to a call), `invalid-utf8` (a line of bytes that are not UTF-8), `orphan-crash` (starts a
process that holds its stdout, writes that process's id to $ORPHAN_PID_FILE, then exits),
`lone-surrogate` (answers "cut " and a lone surrogate's escape, as JSON.stringify writes it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from typing import TextIO

from pydantic import BaseModel

from conformance import _protocol as p
from conformance._isolate import RemoteModel, Worker, protocol_stdout
from conformance.binding import LMCall
from conformance.bindings.reference import ReferenceBinding


class Harness(Worker):
    def __init__(self, out: TextIO, broken: str | None, when: str) -> None:
        super().__init__(ReferenceBinding(), out, name="python-harness")
        self.broken, self.when = broken, when
        self.cut_next_answer = False

    def send(self, message: BaseModel) -> None:
        if not (isinstance(message, p.Ran) and self.cut_next_answer):
            return super().send(message)
        self.cut_next_answer = False
        # What JavaScript's JSON.stringify writes for an answer cut inside an emoji: a lone
        # surrogate's escape, valid JSON that a strict parser refuses.
        ran = json.loads(p.encode(message))
        ran["outcome"]["outputs"] = {**(ran["outcome"]["outputs"] or {}), "answer": "cut \ud83d"}
        self.write(json.dumps(ran) + "\n")

    def call(self, c: p.Run | p.Resume | p.RunConcurrently) -> None:
        if self.when not in c.model_dump_json():
            self.serve(c)
        elif self.broken == "crash":
            run = c.runs[0].run if isinstance(c, p.RunConcurrently) else c.run
            RemoteModel(self, run).answer(LMCall(kind="step", adapter="chat", messages=[]))
            print("harness: something went badly wrong mid-run", file=sys.stderr, flush=True)
            # A traceback names files by their absolute paths: the checkout's and the home folder's.
            print(f'  File "{os.path.abspath(__file__)}", line 53, in answer', file=sys.stderr, flush=True)
            print(f'  File "{os.path.expanduser("~/lib/mylib.py")}", line 9, in run', file=sys.stderr,
                  flush=True)
            os._exit(3)
        elif self.broken == "stall":
            print("harness: waiting forever", file=sys.stderr, flush=True)
            threading.Event().wait()
        elif self.broken == "invalid-json":
            self.write("this is not JSON\n")
        elif self.broken == "invalid-utf8":
            self._out.flush()
            self._out.buffer.write(b'{"type": "ran", "note": "\xff\xfe"}\n')
            self._out.buffer.flush()
        elif self.broken == "orphan-crash":
            fd = self._out.fileno()
            orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                      stdout=fd, stderr=fd, stdin=subprocess.DEVNULL)
            with open(os.environ["ORPHAN_PID_FILE"], "w", encoding="utf-8") as out:
                out.write(str(orphan.pid))
            print("harness: leaving a process behind", file=sys.stderr, flush=True)
            os._exit(3)
        elif self.broken == "lone-surrogate":
            self.cut_next_answer = True
            self.serve(c)
        elif self.broken == "bad-message":
            self.write('{"type": "ran", "id": "not a number", "outcome": 5}\n')
        else:
            self.serve(c)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="broken",
                        choices=["invalid-json", "bad-message", "crash", "stall", "invalid-utf8",
                                 "orphan-crash", "lone-surrogate"])
    parser.add_argument("--when", default="", help="break only calls whose command holds this text")
    args = parser.parse_args()
    Harness(protocol_stdout(), args.broken, args.when).serve_forever(sys.stdin)


if __name__ == "__main__":
    main()
