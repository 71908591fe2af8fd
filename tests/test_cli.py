"""The `kmodel` command's usage errors: one line on stderr naming the subcommand and where its usage is, exit 2."""

from __future__ import annotations

import pytest

from kmodel.cli import main


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses from inside the parser
        code = exc.code
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


@pytest.mark.parametrize("argv, command, words", [
    (["check", "--seed", "abc"], "kmodel check", "argument --seed: invalid int value: 'abc'"),
    (["simulate"], "kmodel simulate", "the following arguments are required: -f/--filename"),
    # an option no subcommand knows: refused by the subcommand's parser, not by the top-level one
    (["simulate", "-f", "examples/web-service.yaml", "--bogus"], "kmodel simulate",
     "unrecognized arguments: --bogus"),
    (["replay", "a.json", "b.json"], "kmodel replay", "unrecognized arguments: b.json"),
    (["--bogus"], "kmodel", "unrecognized arguments: --bogus"),
])
def test_a_usage_error_is_one_line_naming_the_subcommand_and_its_help(argv, command, words, capsys):
    code, err = refusal(argv, capsys)
    assert code == 2
    assert err.count("\n") == 1, err
    assert err == f"{command}: error: {words} (see `{command} --help`)\n"


def test_kmodel_alone_is_a_usage_error_of_one_line(capsys):
    code, err = refusal([], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("usage: kmodel ") and "`kmodel --help`" in err


def test_help_is_not_an_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--help"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("usage: kmodel check")


def test_serve_says_it_serves_https_in_its_help(capsys):
    # it serves HTTPS unless --http: a user who points a client at http:// gets nothing
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    description = capsys.readouterr().out.split("\n\n")[1]
    assert "HTTPS" in description and "--http: plain HTTP" in description
