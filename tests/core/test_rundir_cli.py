import json
import subprocess
import sys

from factatlas.atomic import dumps_json, write_json
from factatlas.errors import ConfigError, unknown
from factatlas.rundir import RunDir


def test_manifest_merges_stages_and_hashes_outputs(tmp_path):
    run = RunDir.open(tmp_path / "r")
    out = run.stage("curate") / "facts.parquet"
    out.write_bytes(b"abc")
    run.record_stage("curate", config={"pair": "arab-west"}, counts={"facts": 3}, outputs=[out])
    run.record_stage("build", config={"langs": ["ar", "en"]})
    manifest = json.loads(run.manifest_path.read_text())
    assert set(manifest["stages"]) == {"curate", "build"}
    assert manifest["stages"]["curate"]["outputs"] == {
        "curate/facts.parquet": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    }
    assert manifest["stages"]["curate"]["counts"] == {"facts": 3}


def test_atomic_json_is_canonical(tmp_path):
    write_json(tmp_path / "a.json", {"b": 1, "a": "é"})
    assert (tmp_path / "a.json").read_text("utf-8") == '{\n  "a": "é",\n  "b": 1\n}\n'
    assert dumps_json({"b": [1, 2], "a": 1}) == dumps_json({"a": 1, "b": [1, 2]})  # key order is canonical
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_errors_name_place_and_suggest():
    e = ConfigError("unknown case 'Ess'; expected one of nom, gen", "templates/lang/ru.yaml", 14, 9)
    assert str(e) == "templates/lang/ru.yaml:14:9: unknown case 'Ess'; expected one of nom, gen"
    assert unknown("culture", "arab-wset", ["arab-west", "asia-west"]) == (
        "unknown culture 'arab-wset'. Did you mean 'arab-west'? Available: arab-west, asia-west"
    )


# Imported only inside the commands that need them: `factatlas --help` stays fast without a timed test.
HEAVY_MODULES = {"torch", "transformers", "tokenizers", "datasets", "huggingface_hub", "pyarrow", "numpy",
                 "pandas", "matplotlib", "pyoxigraph", "jinja2", "requests", "urllib3", "scipy", "sklearn"}


def test_cli_help_imports_no_heavy_module():
    code = ("import sys; from factatlas.app.cli import app; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert sorted(HEAVY_MODULES & set(done.stdout.split())) == []


def test_atomic_files_get_the_usual_mode(tmp_path):
    import os
    import stat

    from factatlas.atomic import append_line, write_together

    write_json(tmp_path / "m.json", {})
    write_together({tmp_path / "a.txt": b"a", tmp_path / "b.txt": b"b"})
    append_line(tmp_path / "log.jsonl", "{}\n")
    umask = os.umask(0)
    os.umask(umask)
    for name in ("m.json", "a.txt", "b.txt", "log.jsonl"):  # each way a file is written
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name
