"""The glossary: verdicts, levels, conformance, the requirement ID prefixes, in plain words."""

from __future__ import annotations

from conformance._site._causes import DEFINITION
from conformance._site._context import Site
from conformance._site._html import e, page, verdict_mark

_VERDICTS = (
    ("passed", "The library did what the requirement says, in every scenario of it that ran."),
    ("failed", "The library broke the requirement; the details say what it did instead."),
    ("known-failure", "A failure the library's binding declares, with a reason checked against the "
     "library's source. It is a failure like any other (red, counted as failed); the tag only says the "
     "suite expected it, and the details show what the run observed beside the declared reason."),
    ("errored", "The binding (the suite's adapter for the library) broke, raised or returned something "
     "the contract does not allow: no verdict on the library."),
    ("blocked", "The scenario could not be judged because another requirement it depends on failed "
     "(named in the details); never counted as passed."),
    ("not-claimed", "The requirement needs an optional capability (approval, streaming, ...) the "
     "library does not have; the binding gives its one-line reason. Never counted as failed."),
)
_PREFIXES = (
    ("LOOP", "the agent loop: tool calls, the final answer, the step cap"),
    ("STEP", "what each model call is shown and offered"),
    ("TRJ", "the trajectory (the steps) the library hands back"),
    ("ERR", "tools that raise, and stopping after repeated errors"),
    ("ARGS", "the arguments the model gives a tool: JSON of any shape or size"),
    ("EXH", "what running out of steps does"),
    ("EXT", "the extraction call that turns the trajectory into the outputs (DSPy-shaped modules)"),
    ("SIG", "signatures (DSPy-shaped modules)"),
    ("ADP", "adapters that format and parse the model calls"),
    ("HITL", "a human in the loop: asking the user, approving tool calls"),
    ("ASYNC", "async runs"),
    ("STREAM", "streaming runs"),
    ("NET", "retrying transient model failures over the network"),
)


def glossary(site: Site) -> str:
    """glossary.html."""
    verdicts = "".join(f'<dt class="v-{v}">{verdict_mark(v)}</dt><dd>{e(text)}</dd>' for v, text in _VERDICTS)
    prefixes = "".join(f"<dt><code>{p}-n</code></dt><dd>{e(text)}</dd>" for p, text in _PREFIXES)
    topics = "".join(f"<dt>{e(t.name)}</dt><dd>{e(', '.join(t.requirements))}</dd>" for t in site.meta.topics)
    body = f"""<h1>Glossary</h1>
<h2>Verdicts</h2><dl class="facts">{verdicts}</dl>
<h2>Levels</h2><dl class="facts">
<dt>MUST</dt><dd>A library that fails it does not conform.</dd>
<dt>SHOULD</dt><dd>Recommended: a failure is reported with its reason (which may be "by design") but does
not make the library non-conforming. Counted apart.</dd>
<dt>Conforms</dt><dd>Every MUST requirement of the core and of the capabilities the library claims
passed.</dd>
<dt>Cause</dt><dd>{e(DEFINITION)} A library that does not conform shows its MUST failures counted by
cause, and how many requirements they block.</dd>
<dt>Core</dt><dd>The requirements every agent loop is judged on; the others apply only to a library that
claims their capability.</dd>
<dt>Capability</dt><dd>An optional feature a library may have (<code>tool-approval</code>,
<code>streaming</code>, ...). The binding claims every capability the library has.</dd>
<dt>Variant (<code>library+opt-in</code>)</dt><dd>The same library with one documented option turned on,
judged apart: the plain name is always the library's defaults.</dd>
<dt>Baseline</dt><dd>The suite's own reference implementation, which passes everything: the proof that
each requirement can be met, not a contender.</dd>
<dt>Binding</dt><dd>The suite's adapter for one library: it translates, it never repairs.</dd></dl>
<h2>Requirement IDs</h2><dl class="facts">{prefixes}</dl>
<h2>Topics of the scorecard</h2><dl class="facts">{topics}</dl>"""
    return page("Glossary: conformance of agent libraries", body)
