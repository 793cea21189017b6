"""A local stand-in for the Hub's HTTP API: enough of it for HfApi's create_repo, list_repo_refs,
list_repo_files, create_commit (preupload + NDJSON commit, inline "regular" uploads) and create_tag.

It keeps real state (repositories, commits with their files, branches, tags), answers with the Hub's
JSON shapes and error codes, and records every request (method, path, Authorization header, body), so a
test can check the order of calls, what the tag points at and that the token only travels in headers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class Request:
    method: str
    path: str
    authorization: str
    body: bytes


@dataclass
class Repo:
    private: bool
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # sha -> files
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


class HubStub:
    def __init__(self, fail_commit_with: str | None = None):
        self.requests: list[Request] = []
        self.repos: dict[str, Repo] = {}
        self.fail_commit_with = fail_commit_with  # body of a 500 answer to /commit (error-path tests)
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _answer(self, status: int, obj=None, headers: dict[str, str] | None = None):
                data = json.dumps(obj if obj is not None else {}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                url = urlsplit(self.path)
                with stub._lock:
                    stub.requests.append(Request(self.command, url.path, self.headers.get("Authorization", ""),
                                                 body))
                    status, obj, headers = stub.route(self.command, url.path, body, self)
                self._answer(status, obj, headers)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HubStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- the API -------------------------------------------------------------------------------

    def calls(self) -> list[str]:
        """The API operations in order, e.g. ['create_repo', 'refs', 'preupload', 'commit', 'tag']."""
        out = []
        for r in self.requests:
            parts = r.path.strip("/").split("/")
            if r.path == "/api/repos/create":
                out.append("create_repo")
            elif r.path == "/api/validate-yaml":
                out.append("validate_yaml")
            elif len(parts) >= 5 and parts[0] == "api":
                out.append(parts[4])
            else:
                out.append(r.path)
        return out

    def route(self, method: str, path: str, body: bytes, handler) -> tuple[int, object, dict[str, str]]:
        not_found = (404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
        if path == "/api/repos/create" and method == "POST":
            payload = json.loads(body)
            repo_id = f"{payload['organization']}/{payload['name']}"
            if repo_id in self.repos:
                return 409, {"error": "You already created this dataset repo", "url": f"{self.url}/datasets/{repo_id}"}, {}
            self.repos[repo_id] = Repo(private=payload.get("visibility") == "private" or bool(payload.get("private")))
            return 200, {"url": f"{self.url}/datasets/{repo_id}", "name": repo_id}, {}
        if path == "/api/validate-yaml":
            return 200, {"errors": [], "warnings": []}, {}
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if len(parts) < 5 or parts[:2] != ["api", "datasets"]:
            return 404, {"error": f"no route {method} {path}"}, {}
        repo_id, op, rest = f"{parts[2]}/{parts[3]}", parts[4], parts[5:]
        repo = self.repos.get(repo_id)
        if repo is None:
            return not_found
        if op == "refs" and method == "GET":
            def ref(kind, name, sha):
                return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": sha}
            return 200, {"branches": [ref("heads", n, s) for n, s in sorted(repo.branches.items())],
                         "converts": [], "tags": [ref("tags", n, s) for n, s in sorted(repo.tags.items())]}, {}
        if op == "tree" and method == "GET":
            rev = rest[0] if rest else "main"
            sha = repo.branches.get(rev) or repo.tags.get(rev) or (rev if rev in repo.commits else None)
            if sha is None:
                return 404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"}
            files = repo.commits[sha]
            return 200, [{"type": "file", "path": p, "oid": hashlib.sha1(d).hexdigest(), "size": len(d)}
                         for p, d in sorted(files.items())], {}
        if op == "preupload" and method == "POST":
            files = json.loads(body)["files"]
            return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                                   for f in files]}, {}
        if op == "commit" and method == "POST":
            if self.fail_commit_with is not None:
                return 500, {"error": self.fail_commit_with}, {}
            branch = rest[0] if rest else "main"
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            header = next(x["value"] for x in lines if x["key"] == "header")
            parent = header.get("parentCommit")
            head = repo.branches.get(branch)
            if parent is not None and parent != head:
                return 412, {"error": "A commit has happened since. Please refresh and try again."}, {}
            files = dict(repo.commits.get(head, {})) if head else {}
            for x in lines:
                if x["key"] == "file":
                    files[x["value"]["path"]] = base64.b64decode(x["value"]["content"])
                elif x["key"] == "deletedFile":
                    files.pop(x["value"]["path"], None)
            digest = hashlib.sha1(json.dumps([head, header.get("summary"), sorted(
                (p, hashlib.sha1(d).hexdigest()) for p, d in files.items())]).encode()).hexdigest()
            repo.commits[digest] = files
            repo.branches[branch] = digest
            return 200, {"commitUrl": f"{self.url}/datasets/{repo_id}/commit/{digest}", "commitOid": digest,
                         "pullRequestUrl": None}, {}
        if op == "tag" and method == "POST":
            rev = rest[0] if rest else "main"
            payload = json.loads(body)
            if payload["tag"] in repo.tags:
                return 409, {"error": "Tag already exists"}, {}
            sha = repo.branches.get(rev) or (rev if rev in repo.commits else None)
            if sha is None:
                return 404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"}
            repo.tags[payload["tag"]] = sha
            return 200, {}, {}
        return 404, {"error": f"no route {method} {path}"}, {}
