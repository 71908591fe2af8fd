"""The checker's reach: a short default run draws every family of inputs the model's components read; and
`kmodel check --reach` reports which branch outcomes of the model and of a component of one's own a run took.

A mechanism the checker never drives is untested, whatever the unit tests say. The first tests run what
`kmodel check --seed 64 --examples 30 --fix all` runs (the fixes let it run past the upstream bugs the model
reproduces, which would end it early) and asks that each family of actions happened at least once (its
rules count under the name of what they did: a fault rule with no candidate of its own kind injects the next
kind that has one, and counts as that kind).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmodel.checker.reach import function_lines
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.cli import main
from kmodel.fixes import NAMES
from kmodel.report.render import build_view, render_html, render_markdown

#: each family of inputs, and the names its actions count under in report.json's `rules`
FAMILIES: dict[str, tuple[str, ...]] = {
    "node labels": ("label_node",),
    "taints, cordon and uncordon": ("taint_node", "cordon_node"),
    "pods of every shape (host ports by protocol and hostIP, hostNetwork, resources, placement, tolerations)":
        ("apply_pod_shape",),
    "pod label edits that release and adopt": ("label_pod",),
    "finalizers added and removed": ("add_finalizer", "remove_finalizer"),
    "graceful, forced and propagating deletes": ("delete_with_options",),
    "namespaces created, filled and deleted": ("create_namespace", "apply_in_namespace", "delete_namespace",
                                                "namespace_round_trip"),
    "ownerReferences written by hand": ("apply_owned",),
    "RBAC objects and requests as other users": ("apply_role", "apply_binding", "delete_rbac"),
    "Service selector and port edits": ("edit_service",),
    "kubectl patch of every type (merge, JSON, strategic) against what exists": ("patch_object",),
    "Deployment strategy, pause and resume, rollback": ("set_strategy", "pause_deployment", "rollout_undo"),
    "invalid manifests": ("apply_invalid",),
    "StatefulSets applied and scaled": ("apply_statefulset", "scale_statefulset"),
    "StatefulSets deleted, with a cascade": ("delete_statefulset",),
    "Jobs, Secrets and service account tokens": ("apply_job", "delete_job", "apply_secret", "request_token"),
    "per-request faults": ("fail_request_429", "fail_request_500", "fail_request_503", "fail_request_504"),
    "compaction at a chosen revision": ("compact", "compact_delete"),
    "API server and component restarts": ("crash", "restart"),
    "delayed links and held streams": ("delay_link", "stall_watch"),
    "probe flaps": ("flap_readiness", "fail_liveness"),
    "a CRD and its custom objects": ("apply_crd", "apply_database", "delete_crd"),
    "a second etcd client's reads, watches, txns and compactions": ("etcd_range", "etcd_watch", "etcd_txn",
                                                                     "etcd_compact"),
}


def test_every_family_names_rules_the_machine_has():
    """A renamed rule would leave its family here asking for a name nothing counts under (the fault rules count
    under what they did: `fail_request` as `fail_request_<code>`, `etcd_client` under the request it sent)."""
    from kmodel.checker.etcd_client_rules import RULE_NAMES as ETCD_CLIENT_REQUESTS
    from kmodel.checker.machine import LongWaits
    from kmodel.checker.rulebook import rule_families, rule_names

    declared = {n for cls in (*LongWaits.__mro__, *rule_families()) for n in rule_names(cls)}
    counted = declared | {f"fail_request_{code}" for code in (429, 500, 503, 504)} | set(
        ETCD_CLIENT_REQUESTS.values())
    for family, names in FAMILIES.items():
        assert set(names) <= counted, (family, set(names) - counted)


@pytest.fixture(scope="module")
def rules() -> dict[str, int]:
    return run_campaign(CheckOptions(examples=30, seed=64, fixes=NAMES)).stats.rules


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_short_default_run_reaches_every_family_of_inputs(rules, family):
    assert any(rules.get(name, 0) > 0 for name in FAMILIES[family]), (family, {n: rules.get(n, 0) for n in
                                                                                FAMILIES[family]})


# --------------------------------------------------------------------------------------------- kmodel check --reach

TENANT = "examples.operators.tenant:TenantOperator"


@pytest.fixture(scope="module")
def tenant_reach(tmp_path_factory) -> dict:
    """report.json's reach section of a short run of the tenant operator (examples/operators/tenant.py)."""
    report = tmp_path_factory.mktemp("reach")
    assert main(["check", "--reach", "--component", TENANT, "--nodes", "1", "--examples", "3", "--steps", "10",
                 "--seed", "1", "--report", str(report)]) == 0
    return json.loads((report / "report.json").read_text())["reach"]


def test_reach_shows_a_branch_of_the_operators_reconcile_the_run_never_took_and_one_it_took(tenant_reach):
    from examples.operators.tenant import TenantOperator

    lines, first = inspect.getsourcelines(TenantOperator.sync)
    inside_sync = range(first, first + len(lines))
    never = [o for o in tenant_reach["never_taken"]
             if o["file"].endswith("examples/operators/tenant.py") and o["line"] in inside_sync]
    assert never, "a 3-example run took every branch outcome of the reconcile"
    for outcome in never:
        assert outcome["package"] == "examples.operators.tenant"
        assert outcome["source"] == lines[outcome["line"] - first].strip()
    # a branch line of sync with one outcome never taken and the other taken: each if has two outcomes, and
    # only one of this line's is listed
    assert any(sum(1 for o in never if o["line"] == line) == 1 for line in {o["line"] for o in never})
    operator = next(p for p in tenant_reach["packages"] if p["name"] == "examples.operators.tenant")
    assert 0 < operator["outcomes"]["taken"] < operator["outcomes"]["total"]
    assert operator["outcomes"]["total"] - operator["outcomes"]["taken"] == sum(
        1 for o in tenant_reach["never_taken"] if o["package"] == "examples.operators.tenant")


def test_reach_counts_every_model_package_and_sums_them(tenant_reach):
    names = [p["name"] for p in tenant_reach["packages"]]
    assert names[:3] == ["store", "apiserver", "client"] and names[-1] == "examples.operators.tenant"
    for key in ("lines", "outcomes"):
        for part in ("taken", "total"):
            assert tenant_reach["total"][key][part] == sum(p[key][part] for p in tenant_reach["packages"])
    store = tenant_reach["packages"][0]
    assert 0 < store["outcomes"]["taken"] < store["outcomes"]["total"]


def test_the_front_end_of_a_model_package_is_not_counted(tenant_reach):
    """`kmodel fixes` (kmodel/fixes/command.py) is the command line's, which no check runs: not the model."""
    assert not [o for o in tenant_reach["never_taken"] if o["file"] == "kmodel/fixes/command.py"]
    assert [o for o in tenant_reach["never_taken"] if o["file"] == "kmodel/fixes/__init__.py"]  # the model's is


def test_only_lines_inside_functions_count(tmp_path):
    """A module's top-level code, its class bodies and its comprehensions run at import, before a check
    measures anything: they are not counted; a function's body, a method's and a comprehension in them are."""
    source = tmp_path / "sample.py"
    source.write_text(textwrap.dedent("""\
        import os
        X = [i for i in range(3)]

        def f(a):
            if a:
                return 1
            return [b for b in a]

        class C:
            y = 1

            def m(self):
                for i in self:
                    pass
        """))
    assert sorted(function_lines(str(source))) == [5, 6, 7, 13, 14]


def test_reach_with_several_workers_is_a_usage_error(tmp_path, capsys):
    assert main(["check", "--reach", "--workers", "2", "--report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["kmodel check: error: --reach measures one process: run it without --workers and --scheduler"]


def test_without_reach_coverage_is_never_imported_and_the_report_has_no_reach(tmp_path):
    program = ("import sys; from kmodel.cli import main; "
               f"code = main(['check', '--examples', '1', '--steps', '3', '--report', {str(tmp_path)!r}]); "
               "print(code, 'coverage' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    # coverage.py is what costs: kmodel.checker.reach itself imports it only when a run measures (the guided
    # campaign's module, imported by run.py, reads reach's helpers too)
    assert out.stdout.strip().splitlines()[-1] == "0 False", out.stderr
    assert "reach" not in json.loads((tmp_path / "report.json").read_text())


REACH_SECTION = {
    "packages": [{"name": "store", "lines": {"taken": 3, "total": 4}, "outcomes": {"taken": 1, "total": 2}},
                 {"name": "ipam", "lines": {"taken": 2, "total": 2}, "outcomes": {"taken": 2, "total": 2}}],
    "total": {"lines": {"taken": 5, "total": 6}, "outcomes": {"taken": 3, "total": 4}},
    "never_taken": [{"package": "store", "file": "kmodel/store/store.py", "line": 12, "to": None,
                     "source": "if a < b and c:"}],
}


def test_the_reports_show_the_totals_per_package_then_what_was_never_taken():
    report = {"passed": True, "invariants": [], "rules": {}, "violations": [], "reach": REACH_SECTION}
    view = build_view(report, [])
    md = render_markdown(view)
    assert "## Reach" in md
    assert "| `store` | 1 of 2 (50 %) | 3 of 4 (75 %) | 1 |" in md
    assert "| **total** | 3 of 4 (75 %) | 5 of 6 (83 %) | 1 |" in md
    assert "### Never taken in `store` (1)" in md
    assert "kmodel/store/store.py:12 -> exit  if a < b and c:" in md
    assert md.index("## Violations") < md.index("## Reach")  # the tables of what was checked follow the verdict
    page = render_html(view)
    assert '<section id="reach">' in page
    assert ('<details class="reach"><summary>Never taken in <code>store</code> (1)</summary>\n'
            '<pre class="reach">kmodel/store/store.py:12 -&gt; exit  if a &lt; b and c:</pre>') in page
    assert "Never taken in <code>ipam</code>" not in page


def test_a_report_without_reach_has_no_reach_section():
    view = build_view({"passed": True, "invariants": [], "rules": {}, "violations": []}, [])
    assert view.reach is None
    assert "## Reach" not in render_markdown(view) and 'id="reach"' not in render_html(view)


def test_the_terminal_says_the_reach_in_one_line():
    from kmodel.checker.command import reach_line

    section = {"total": {"outcomes": {"taken": 5, "total": 8}},
               "packages": [{"name": "store", "outcomes": {"taken": 3, "total": 4}},
                            {"name": "ipam", "outcomes": {"taken": 2, "total": 4}},
                            {"name": "clock", "outcomes": {"taken": 0, "total": 0}}]}
    assert reach_line(section) == ("reach: 5 of 8 (62 %) branch outcomes taken; fewest in ipam: 2 of 4 (50 %) "
                                   "(the report lists the ones never taken)")


# ------------------------------------------------------------------------ measured from before the model is imported

def test_the_command_measures_from_before_kmodel_is_imported_only_when_check_asks_for_reach():
    from kmodel.launch import asks_for_reach, component_modules

    assert asks_for_reach(["check", "--seed", "1", "--reach"])
    assert not asks_for_reach(["replay", "t.json", "--reach"]) and not asks_for_reach(["check", "--", "--reach"])
    assert not asks_for_reach([]) and not asks_for_reach(["check"])
    assert component_modules(["check", "--component", "examples.operators.tenant:TenantOperator,deployment",
                              "--component=pkg.mod:make", "--reach", "--component"]) == [
        "examples.operators.tenant", "pkg.mod"]


def test_what_runs_at_import_and_while_the_options_are_read_is_measured_by_the_command(tmp_path):
    """The built-in components register themselves while kmodel is imported (registry.register): `python -m kmodel
    check --reach` takes that outcome; a check called in a process that imported kmodel already cannot, and lists
    it as never taken."""
    def into(file: str, text: str) -> tuple[str, int, int]:  # the outcome from the line of `text` into the next
        line = next(i for i, t in enumerate(Path(file).read_text().splitlines(), 1) if t.strip() == text)
        return file, line, line + 1

    registering = into("kmodel/component/registry.py", "if registration.builtin:")

    def never(report):
        return {(o["file"], o["line"], o["to"]) for o in json.loads((report / "report.json").read_text())["reach"]
                ["never_taken"]}

    args = ["check", "--reach", "--fix", "all", "--nodes", "1", "--examples", "1", "--steps", "2", "--seed", "1"]
    command = tmp_path / "command"
    done = subprocess.run([sys.executable, "-m", "kmodel", *args, "--report", str(command)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert done.returncode == 0, done.stderr
    assert registering not in never(command)
    in_process = tmp_path / "in-process"
    assert main([*args, "--report", str(in_process)]) == 0
    assert registering in never(in_process)
