"""A small real OpenAI-compatible server for the tests: ``POST /v1/completions`` with ``echo`` + ``logprobs``
over a transformers causal LM, the way vLLM answers it (``transformers serve`` ignores both fields), and
``POST /v1/chat/completions`` (greedy, through the model's chat template) when the model has one.

Prompts are token-id lists (or one list, or a string); for each, ``token_logprobs[i]`` is log p(token i |
tokens before it), the first entry None, followed by one greedy token (``max_tokens`` must be 1).
Faults are scripted: ``faults`` is consumed one per request, each ``(status, headers, body)`` (None: answer), to test
retries, ``Retry-After`` and key redaction. Every request's Authorization header and path are recorded.
``echo_auth``: like a debugging proxy or a careless API, every answer echoes the request's Authorization
value in other fields (``id``, a nested ``debug.request.headers``, each choice's ``text`` and ``logprobs.tokens``)
and at the end of a chat reply's text.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LogprobServer:
    def __init__(self, lm, faults=(), batched: bool = False, echo_auth: bool = False):
        """``batched``: score a request's prompts in one padded forward pass (9x less CPU for 24 prompts; the
        log-probabilities may differ from one pass per prompt in the last bits)."""
        self.lm = lm
        self.batched = batched
        self.echo_auth = echo_auth
        self.faults = list(faults)
        self.authorizations: list[str | None] = []
        self.requests = 0
        self.paths: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests += 1
                    server.authorizations.append(self.headers.get("Authorization"))
                    server.paths.append(self.path)
                    fault = server.faults.pop(0) if server.faults else None
                if fault is not None:
                    status, headers, text = fault
                    self._send(status, text.replace("{auth}", self.headers.get("Authorization") or ""), headers)
                    return
                auth = self.headers.get("Authorization") or ""
                if self.path == "/v1/chat/completions" and getattr(server.lm.tokenizer, "chat_template", None):
                    with server._lock:
                        answer = server._chat(body["messages"], int(body.get("max_tokens") or 16))
                    if server.echo_auth:
                        answer = f"{answer} [{auth}]"
                    self._send(200, server._echoed(auth, {"object": "chat.completion", "model": body.get("model"), "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}]}))
                    return
                if self.path != "/v1/completions":
                    self._send(404, json.dumps({"error": f"no route {self.path}"}))
                    return
                if not (body.get("echo") and body.get("logprobs") is not None and body.get("max_tokens") == 1):
                    self._send(400, json.dumps({"error": "this server answers echo=true, logprobs, max_tokens=1"}))
                    return
                prompts = body["prompt"]
                if isinstance(prompts, str):
                    prompts = [server.lm.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
                elif prompts and isinstance(prompts[0], int):
                    prompts = [prompts]
                with server._lock:
                    choices = (server._batched_choices(prompts) if server.batched
                               else [server._choice(i, ids) for i, ids in enumerate(prompts)])
                if server.echo_auth:
                    for choice in choices:
                        choice["text"] = auth
                        choice["logprobs"]["tokens"] = [auth, *choice["logprobs"]["tokens"][1:]]
                self._send(200, server._echoed(auth, {"object": "text_completion", "model": body.get("model"),
                                                      "choices": choices}))

            def _send(self, status, text, headers=None):
                data = text.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a killed client's closed socket: not news
                import sys

                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _echoed(self, auth: str, answer: dict) -> str:
        """The answer's JSON text, with the Authorization value echoed in other fields when ``echo_auth``."""
        if self.echo_auth:
            answer = {"id": f"cmpl-{auth}", **answer,
                      "debug": {"request": {"headers": {"Authorization": auth, "Accept": "application/json"}}}}
        return json.dumps(answer)

    def _choice(self, index: int, ids: list[int]) -> dict:
        import torch

        with torch.inference_mode():
            logp = torch.log_softmax(self.lm.model(torch.tensor([ids])).logits[0].float(), dim=-1)
        return self._choice_of(index, ids, logp)

    def _batched_choices(self, prompts: list[list[int]]) -> list[dict]:
        import torch

        if not prompts:
            return []
        width = max(len(ids) for ids in prompts)
        padded = torch.tensor([ids + [0] * (width - len(ids)) for ids in prompts])
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in prompts])
        with torch.inference_mode():  # right padding: a causal model's real positions never see it
            logp = torch.log_softmax(self.lm.model(padded, attention_mask=mask).logits.float(), dim=-1)
        return [self._choice_of(index, ids, logp[index, : len(ids)]) for index, ids in enumerate(prompts)]

    def _choice_of(self, index: int, ids: list[int], logp) -> dict:
        """The completion choice of prompt ``ids`` from its rows of log-probabilities: each prompt token's
        log-probability after the ones before it, and the greedy next token."""
        prompt_lp = [None] + [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]
        nxt = int(logp[-1].argmax())
        tokens = [self.lm.tokenizer.decode([t]) for t in [*ids, nxt]]
        return {"index": index, "text": tokens[-1], "finish_reason": "length",
                "logprobs": {"tokens": tokens, "token_logprobs": [*prompt_lp, float(logp[-1, nxt])],
                             "top_logprobs": None}}

    def _chat(self, messages: list[dict], max_new_tokens: int) -> str:
        from factatlas.probe.chat import LocalChat

        return LocalChat(self.lm, max_new_tokens=max_new_tokens).chat([messages])[0].answer

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
