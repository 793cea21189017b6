"""X-FACTR: multi-token decoding of the slot by a masked LM without candidates, matched against the golds and
aliases (``factatlas.probe.xfactr``; its options are declared there, beside the decoder that reads them)."""

from __future__ import annotations

from factatlas.probe.rule import Rule, register_rule
from factatlas.probe.xfactr import XFactrOptions


def _local(lm, options: XFactrOptions, backend):
    from factatlas.probe.xfactr import XFactrDecoder

    return XFactrDecoder.from_options(lm, options, batch_tokens=backend.batch_tokens)


def _answer(decoder, prompts, job):
    from factatlas.probe.generative import answer_prompts

    return answer_prompts(decoder, prompts, job.aliases, job.model, job.spec.name, progress=job.progress)


register_rule(Rule("xfactr", "mlm", "generate",
                   "X-FACTR multi-token decoding without candidates, matched against golds and aliases",
                   options=XFactrOptions, local=_local, answer=_answer))
