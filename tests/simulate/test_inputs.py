"""`kmodel simulate` refuses input it cannot use with one line and exit 2, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmodel.cli import main
from kmodel.simulate.inputs import FaultSpec, InputError, parse_fault, read_manifests

MANIFESTS = Path(__file__).resolve().parents[2] / "examples"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_directory_is_read_in_lexical_order_and_lists_expand(tmp_path):
    write(tmp_path, "b.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n")
    write(tmp_path, "a.yml", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, "
                             "metadata: {name: a1}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: a2}}\n")
    write(tmp_path, "notes.txt", "not a manifest")
    names = [m.document["metadata"]["name"] for m in read_manifests([str(tmp_path)])]
    assert names == ["a1", "a2", "b"]


def test_documents_stay_as_written_so_the_server_decodes_them(tmp_path):
    path = write(tmp_path, "d.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\nspecc: {}\n")
    [manifest] = read_manifests([path])
    assert manifest.document["specc"] == {}  # a misspelt field is the API server's 400, not an input error


@pytest.mark.parametrize("text, needle", [
    ("apiVersion: v1\nkind: [unclosed\n", "error parsing"),
    ("kind: Namespace\nmetadata: {name: x}\n", "has no apiVersion"),
    ("apiVersion: v1\nmetadata: {name: x}\n", "has no kind"),
    ("- just\n- a list\n", "is a list, not an object"),
])
def test_unusable_documents_exit_2_with_one_line(tmp_path, capsys, text, needle):
    path = write(tmp_path, "bad.yaml", text)
    code, out, err = run_cli(capsys, "simulate", "-f", path)
    assert code == 2
    assert out == ""
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_kind_the_model_does_not_serve_is_refused_as_kubectl_does_and_the_rest_applied(tmp_path, capsys):
    write(tmp_path, "a.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: shop}\n")
    write(tmp_path, "b.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
    code, out, err = run_cli(capsys, "simulate", "-f", str(tmp_path), "--nodes", "1", "--until", "5", "--json")
    assert code == 1
    report = __import__("json").loads(out)
    # on stderr as kubectl writes it
    assert err == f"error: {report['rejected'][0]['message']}\nensure CRDs are installed first\n"
    assert report["rejected"] == [{
        "code": 0, "reason": "NoKindMatch", "object": "widget/w1",
        "message": f'resource mapping not found for name: "w1" namespace: "shop" from "{tmp_path / "a.yaml"}": '
                   f'no matches for kind "Widget" in version "example.com/v1"'}]
    code, out, _ = run_cli(capsys, "simulate", "-f", str(tmp_path), "--nodes", "1", "--until", "5")
    assert code == 1 and 'no matches for kind "Widget" in version "example.com/v1"\nensure CRDs are installed first' in out


def test_missing_path_and_empty_directory_exit_2(tmp_path, capsys):
    code, _, err = run_cli(capsys, "simulate", "-f", str(tmp_path / "nope.yaml"))
    assert code == 2 and "does not exist" in err
    code, _, err = run_cli(capsys, "simulate", "-f", str(tmp_path))
    assert code == 2 and "no manifests in directory" in err


def test_unreadable_file_exits_2(tmp_path, capsys):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run_cli(capsys, "simulate", "-f", str(path))
    assert code == 2 and "cannot read" in err


@pytest.mark.parametrize("spec, parsed", [
    ("partition:node-2@60", FaultSpec("partition", "node-2", 60_000)),
    ("crash:kubelet/node-1@1.5", FaultSpec("crash", "kubelet/node-1", 1_500)),
    ("heal:apiserver-0@0", FaultSpec("heal", "apiserver-0", 0)),
    ("lose:node-2@30", FaultSpec("lose", "node-2", 30_000)),
    ("remove:node-3@5", FaultSpec("remove", "node-3", 5_000)),
])
def test_fault_specs_parse(spec, parsed):
    assert parse_fault(spec) == parsed


@pytest.mark.parametrize("spec", ["bogus", "explode:node-1@3", "crash:node-1", "crash:@3", "crash:node-1@soon",
                                  "crash:node-1@-1", "crash:node-1@inf"])
def test_bad_fault_specs_are_input_errors(spec):
    with pytest.raises(InputError):
        parse_fault(spec)


def test_bad_options_exit_2(capsys, tmp_path):
    path = write(tmp_path, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
    for argv in (["--nodes", "0"], ["--fault", "partition:node-9@1"], ["--fault", "crash:node-1@100"],
                 ["--fault", "lose:etcd@1"], ["--fault", "lose:kubelet/node-1@1"],
                 ["--fault", "lose:node-2@1", "--fault", "restart:kubelet/node-2@2"],
                 ["--fault", "remove:node-2@1", "--fault", "lose:node-2@1"],
                 ["--until", "nan"]):
        code, out, err = run_cli(capsys, "simulate", "-f", path, "--until", "10", *argv) if argv[0] != "--until" \
            else run_cli(capsys, "simulate", "-f", path, *argv)
        assert code == 2, (argv, err)
        assert err.count("\n") == 1 and out == ""
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "-f", path, "--nodes", "many"])
    assert exc.value.code == 2


def test_every_fault_action_has_a_cluster_method():
    from kmodel.cluster import Cluster
    from kmodel.simulate.inputs import FAULT_ACTIONS
    from kmodel.simulate.run import FAULT_METHODS

    assert set(FAULT_METHODS) == set(FAULT_ACTIONS)
    assert all(callable(getattr(Cluster, m, None)) for m in FAULT_METHODS.values())
