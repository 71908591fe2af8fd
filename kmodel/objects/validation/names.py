"""Name, label and value checks from k8s.io/apimachinery/pkg/util/validation, with their messages.

Each `is_*` function returns the list of messages Kubernetes returns (empty when valid).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Callable

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                         "or '.', and must start and end with an alphanumeric character")
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_ERR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                     "alphabetic character, and end with an alphanumeric character")
QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QNAME_ERR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character")
LABEL_VALUE_FMT = "(" + QNAME_FMT + ")?"
LABEL_VALUE_ERR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                   "'.', and must start and end with an alphanumeric character")
PERCENT_FMT = "[0-9]+%"
PERCENT_ERR = "a valid percent string must be a numeric string followed by an ending '%'"

_DNS1123_LABEL = re.compile("^" + DNS1123_LABEL_FMT + "$")
_DNS1123_SUBDOMAIN = re.compile("^" + DNS1123_SUBDOMAIN_FMT + "$")
_DNS1035_LABEL = re.compile("^" + DNS1035_LABEL_FMT + "$")
_QNAME = re.compile("^" + QNAME_FMT + "$")
_LABEL_VALUE = re.compile("^" + LABEL_VALUE_FMT + "$")
_PERCENT = re.compile("^" + PERCENT_FMT + "$")
_PORT_NAME_CHARSET = re.compile("^[-a-z0-9]+$")
_PORT_NAME_LETTER = re.compile("[a-z]")


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """RegexError (note Kubernetes' ", " after each example, which gives "',  or '")."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{ex}', "
    return msg + f"regex used for validation is '{fmt}')"


def _memo_by_value(fn: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """Memoise a check of one string (a pure function of its value): names, label keys and values repeat
    across objects. Each call still returns a new list, as the check itself does."""
    answers: dict[str, tuple[str, ...]] = {}

    def memoised(value: str) -> list[str]:
        found = answers.get(value) if type(value) is str else None
        if found is None:
            result = fn(value)
            if type(value) is str:
                if len(answers) >= _MEMO_MAX:
                    answers.clear()
                answers[value] = tuple(result)
            return result
        return list(found)

    memoised.__doc__ = fn.__doc__
    memoised.__name__ = fn.__name__
    memoised.__wrapped__ = fn  # type: ignore[attr-defined]
    # the memo itself, for callers that only ask "known valid?" (`answers.get(v, 1)` is falsy, an empty
    # tuple, exactly when v was checked and found valid) and otherwise call the check
    memoised.answers = answers  # type: ignore[attr-defined]
    return memoised


_MEMO_MAX = 65_536


@_memo_by_value
def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1123_LABEL.match(value):
        if _DNS1123_SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


@_memo_by_value
def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1035_LABEL.match(value):
        errs.append(regex_error(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


@_memo_by_value
def is_qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name " + regex_error(QNAME_ERR, QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QNAME.match(name):
        errs.append("name part " + regex_error(QNAME_ERR, QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


@_memo_by_value
def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE.match(value):
        errs.append(regex_error(LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_port_num(port: int) -> list[str]:
    if 1 <= port <= 65535:
        return []
    return ["must be between 1 and 65535, inclusive"]


def is_valid_port_name(port: str) -> list[str]:
    errs = []
    if len(port) > 15:
        errs.append(max_len_error(15))
    if not _PORT_NAME_CHARSET.match(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_percent(value: str) -> list[str]:
    if _PERCENT.match(value):
        return []
    return [regex_error(PERCENT_ERR, PERCENT_FMT, "1%", "93%")]


def is_valid_path_segment_name(name: str) -> list[str]:
    """path.IsValidPathSegmentName (RBAC names)."""
    for illegal in (".", ".."):
        if name == illegal:
            return [f"may not be '{illegal}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """netutils.ParseIPSloppy: also accepts IPv4 octets with leading zeros."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        pass
    parts = value.split(".")
    if len(parts) == 4 and all(p.isdigit() and len(p) <= 3 and int(p) < 256 for p in parts):
        return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
    return None


def parse_cidr(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """netutils.ParseCIDRSloppy: an address/prefix; host bits may be set (10.0.0.1/24 is accepted)."""
    if "/" not in value:
        return None
    addr, _, prefix = value.partition("/")
    ip = parse_ip(addr)
    if ip is None or not prefix.isdigit():
        return None
    try:
        return ipaddress.ip_network(f"{ip}/{int(prefix)}", strict=False)
    except ValueError:
        return None


IP_ERROR = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
CIDR_ERROR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
