"""hooksite.environment: how the settings read each kind of value (no database, no subprocess)."""

import ipaddress

import pytest
from django.core.exceptions import ImproperlyConfigured

from hooksite.environment import Environment, network


def environment(**variables):
    env = Environment()
    env.ENVIRON = variables
    return env


def test_unset_gives_the_default_and_a_missing_required_variable_is_named():
    env = environment()
    assert (env.int("N", 5), env.bool("B", True), env.str("S", "x"), env.list("L", default=["a"])) == (
        5,
        True,
        "x",
        ["a"],
    )
    with pytest.raises(ImproperlyConfigured, match=r"^Set the SECRET_KEY environment variable\.$"):
        env.str("SECRET_KEY")


def test_a_number_or_switch_set_empty_counts_as_unset_but_a_string_or_list_does_not():
    env = environment(N="", F="", B="", S="", L="")
    assert (env.int("N", 5), env.float("F", 1.0), env.bool("B", True)) == (5, 1.0, True)
    assert (env.str("S", "x"), env.list("L", default=["a"])) == ("", [])


@pytest.mark.parametrize(
    "value, expected",
    [
        ("1", True),
        ("true", True),
        (" Yes ", True),
        ("ON", True),
        ("0", False),
        ("no", False),
        ("off", False),
        ("ok", False),
        ("y", False),
        ("maybe", False),
    ],
)
def test_a_switch_is_on_only_for_1_true_yes_or_on(value, expected):
    assert environment(B=value).bool("B", not expected) is expected


def test_a_value_is_taken_as_written_never_as_the_name_of_another_variable():
    env = environment(SECRET_KEY="$OTHER", OTHER="leaked")
    assert env.str("SECRET_KEY", "") == "$OTHER"


def test_numbers_are_read_as_python_reads_them():
    env = environment(N=" 42 ", F="1e3", G="0.25")
    assert (env.int("N", 0), env.float("F", 0.0), env.float("G", 0.0)) == (42, 1000.0, 0.25)


def test_list_items_are_stripped_and_blank_ones_dropped():
    env = environment(L=" https://a.example , ,https://b.example,")
    assert env.list("L", default=[]) == ["https://a.example", "https://b.example"]


def test_networks_are_parsed_and_a_bad_one_is_named_with_what_to_give():
    env = environment(NETS="10.0.0.0/8, 192.168.1.20", BAD="10.0.0.0/8,proxy.local")
    assert env.list("NETS", cast=network, default=[]) == [
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("192.168.1.20/32"),
    ]
    with pytest.raises(ImproperlyConfigured) as caught:
        env.list("BAD", cast=network, default=[])
    assert str(caught.value) == (
        "BAD: 'proxy.local' does not appear to be an IPv4 or IPv6 network "
        "(give addresses or networks such as 10.0.0.0/8)"
    )


@pytest.mark.parametrize(
    "read, message",
    [
        (
            lambda env: env.int("STASH_BATCH_SIZE", 200),
            "STASH_BATCH_SIZE: invalid literal for int() with base 10: 'lots'",
        ),
        (
            lambda env: env.float("STASH_READY_PING_TIMEOUT", 1.0),
            "STASH_READY_PING_TIMEOUT: could not convert string to float: 'lots'",
        ),
    ],
)
def test_a_value_that_cannot_be_read_stops_start_up_naming_the_variable(read, message):
    env = environment(STASH_BATCH_SIZE="lots", STASH_READY_PING_TIMEOUT="lots")
    with pytest.raises(ImproperlyConfigured) as caught:
        read(env)
    assert str(caught.value) == message
