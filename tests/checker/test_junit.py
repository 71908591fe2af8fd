"""`kmodel check --junit-xml PATH`: one test case per invariant, the violated one failing with its message and
trace, written atomically; a bad PATH is one line and exit 2 before exploring."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kmodel.checker.junit import junit_xml, write_junit_xml
from kmodel.cli import main

REPORT = {
    "seed": 14, "profile": "dev", "variant": "default", "fixes": [], "trace_digest": "abc",
    "invariants": [
        {"name": "no-cidr-leak", "kind": "liveness", "checks": 3, "violations": 1, "guarantee": "No leak."},
        {"name": "unique-pod-ips", "kind": "safety", "checks": 40, "violations": 0, "guarantee": "Unique."},
        {"name": "host-ports-unique", "kind": "safety", "checks": 0, "violations": 0, "guarantee": "Ports."},
    ],
    "violations": [{"invariant": "no-cidr-leak", "message": "node IPAM holds 10.244.1.0/24 <&>",
                    "trace": "reports/latest/traces/no-cidr-leak.json", "steps": 8}],
}


def test_one_test_case_per_invariant_the_violated_one_failing():
    root = ET.fromstring(junit_xml(REPORT, seconds=12.5))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped"), suite.get("time")) == (
        "3", "1", "1", "12.500")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["no-cidr-leak", "unique-pod-ips", "host-ports-unique"]
    failure = cases["no-cidr-leak"].find("failure")
    assert failure.get("message") == "node IPAM holds 10.244.1.0/24 <&>"   # escaped in the file, exact when read
    assert "trace: reports/latest/traces/no-cidr-leak.json (8 steps)" in failure.text
    assert "replay: kmodel replay reports/latest/traces/no-cidr-leak.json" in failure.text
    assert cases["unique-pod-ips"].find("failure") is None and cases["unique-pod-ips"].find("skipped") is None
    assert cases["host-ports-unique"].find("skipped") is not None          # never checked
    assert cases["no-cidr-leak"].get("classname") == "kmodel.liveness"
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["seed"] == "14" and properties["trace_digest"] == "abc"


def test_a_violation_of_no_registered_invariant_is_a_failing_case_too():
    report = dict(REPORT, violations=[{"invariant": "model-error", "message": "boom", "trace": "t.json"}])
    suite = ET.fromstring(junit_xml(report)).find("testsuite")
    assert suite.get("tests") == "4" and suite.get("failures") == "1"
    assert suite.findall("testcase")[-1].find("failure").get("message") == "boom"


def test_a_required_situation_is_a_case_failing_when_unreached():
    report = dict(REPORT, required_sometimes={"names": ["rolling-update", "pod-evicted"], "unreached": ["pod-evicted"]},
                  sometimes=[{"name": "pod-evicted", "situation": "A pod was evicted.", "examples": 0}])
    suite = ET.fromstring(junit_xml(report)).find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("5", "2")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["rolling-update"].find("failure") is None
    assert cases["pod-evicted"].get("classname") == "kmodel.sometimes"
    assert cases["pod-evicted"].find("failure").get("message") == "no example reached it"
    assert cases["pod-evicted"].find("system-out").text == "A pod was evicted."


def test_it_is_written_atomically(tmp_path, monkeypatch):
    path = write_junit_xml(tmp_path / "ci" / "kmodel.xml", REPORT)
    assert ET.parse(path).getroot().tag == "testsuites"
    before = path.read_text()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", broken)
    with pytest.raises(OSError):
        write_junit_xml(path, dict(REPORT, violations=[]))
    assert path.read_text() == before                         # the old file, whole
    assert sorted(p.name for p in path.parent.iterdir()) == ["kmodel.xml"]   # no temporary file left


def test_check_writes_it(tmp_path):
    path = tmp_path / "out" / "junit.xml"
    assert main(["check", "--examples", "1", "--steps", "2", "--report", str(tmp_path / "r"),
                 "--junit-xml", str(path)]) == 0
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) >= 20


@pytest.mark.parametrize("make, words", [
    (lambda tmp: str(tmp), "is a folder"),
    (lambda tmp: str(tmp / "file" / "below.xml"), "cannot create its folder"),
])
def test_a_bad_path_is_refused_before_exploring(tmp_path, capsys, make, words):
    (tmp_path / "file").write_text("x")
    assert main(["check", "--examples", "1", "--report", str(tmp_path / "r"), "--junit-xml", make(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # refused before anything was written
