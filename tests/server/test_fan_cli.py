"""``guobiao fan``: one hand, --json, and --jsonl batches."""

from __future__ import annotations

import io
import json

import pytest

from server.cli import main
from server.cli.fan import run_batch, score_lines
from server.presets import load_presets


def test_readable_breakdown(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "fan",
            "[123m][EEE,2]456p789s5s5s",
            "--self-drawn",
            "--seat-wind",
            "S",
            "--round-wind",
            "E",
            "--flowers",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "Mixed Straight" in out and "花龙" in out
    assert "Flower Tiles x2" in out
    assert "Total" in out and " 14" in out
    assert "12 fan without flowers: meets the 8-fan minimum" in out


def test_json_output_is_the_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fan", "555666777p5556s7s", "--self-drawn", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["total"] == 48
    assert result["meets_minimum"] is True
    assert {
        "name": "Pure Triple Chow",
        "name_zh": "一色三同顺",
        "points": 24,
        "count": 1,
    } in result["fans"]


def test_short_hand_does_not_meet_minimum(capsys: pytest.CaptureFixture[str]) -> None:
    # All Chows + Concealed Hand ... well under 8 fan
    assert main(["fan", "123m456m789p234s5s5s", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["meets_minimum"] is False
    assert result["total"] < 8


@pytest.mark.parametrize(
    ("hand", "message"),
    [
        ("123m456p789s123sE1", "digits '1' have no suit letter"),
        ("123m456p789s123sEx", "unknown character 'x'"),
        ("123m456p789s11111s", "appears 5 times"),
        ("123m", "needs 14 standing tiles"),
        ("123m456p789s1112s4s", "not a winning hand"),
    ],
)
def test_bad_hand_is_a_clear_error(
    hand: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fan", hand]) == 1
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_bad_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fan", "11m", "--seat-wind", "X"])
    assert exit_info.value.code == 2
    assert "unknown wind 'X'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fan", "11m", "--flowers", "9"])
    # Flags that cannot be together (robbing a kong on the wall's last tile): said so.
    assert main(["fan", "[234m,1][567p,1][888s,2]56sNN4s", "--kong", "--wall-last"]) == 2
    assert "--kong and --wall-last cannot both be set" in capsys.readouterr().err


def test_batch_keeps_order_and_goes_on_after_errors() -> None:
    lines = [
        json.dumps({"hand": "555666777p5556s7s", "self_drawn": True}),
        "not json",
        json.dumps({"hand": "123m"}),
        json.dumps({"hand": "555666777p5556s7s", "flowers": 9}),
        json.dumps({"hand": "555666777p5556s7s", "self_drawn": "yes"}),
        json.dumps({"hand": "555666777p5556s7s", "seat_wind": "Q"}),
        json.dumps({"hand": "555666777p5556s7s", "colour": "red"}),
        json.dumps(["a list"]),
        "",
        json.dumps({"hand": "\u00b923m456p789s123s5s5s"}),  # a digit Python's int refuses
        json.dumps(
            {
                "hand": "[123m][EEE,2]456p789s5s5s",
                "self_drawn": True,
                "seat_wind": "S",
                "flowers": 2,
            }
        ),
    ]
    out = io.StringIO()
    run_batch(io.StringIO("\n".join(lines) + "\n"), out)
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(results) == len(lines)
    assert results[0]["total"] == 48
    errors = [r.get("error", "") for r in results[1:10]]
    assert all(e.startswith(f"line {i}:") for i, e in enumerate(errors, 2))
    assert "not valid JSON" in errors[0]
    assert "14 standing tiles" in errors[1]
    assert "'flowers' must be a whole number 0..8" in errors[2]
    assert "'self_drawn' must be true or false" in errors[3]
    assert "unknown wind 'Q'" in errors[4]
    assert "unknown field(s) 'colour'" in errors[5]
    assert "JSON object" in errors[6]
    assert "empty line" in errors[7]
    assert "unknown character" in errors[8]
    assert results[10]["total"] == 14
    assert [f["name"] for f in results[10]["fans"]] == [
        "Mixed Straight",
        "Prevalent Wind",
        "Single Wait",
        "Self-Drawn",
        "Flower Tiles",
    ]


# --rules: the custom presets.


def test_custom_rules_score_wild_tiles_with_the_lowest_reading(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The last wild could make EEE (圈风刻 + 门风刻) but 111s (幺九刻) scores lower.
    assert main(["fan", "--rules", "custom", "**3m456p789s11sEE*", "--self-drawn", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {f["name_zh"]: f["points"] * f["count"] for f in result["fans"]} == {
        "不求人": 4,
        "幺九刻": 1,
    }
    assert result["total"] == 5 and result["meets_minimum"] is True


def test_custom_rules_say_there_is_no_minimum(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fan", "--rules", "custom", "123m456m789p234s5s5s"]) == 0
    assert "no minimum under custom: any complete hand wins" in capsys.readouterr().out
    assert main(["fan", "--rules", "custom-8fan", "123m456m789p234s5s5s"]) == 0
    assert "does NOT meet the 8-fan minimum" in capsys.readouterr().out


def test_starred_situations_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fan", "--rules", "custom-nowild", "123m456m789p234s5s5s", "--json"]
    assert main([*args, "--self-drawn", "--heavenly", "--flowers", "2", "--seat-flowers", "1"]) == 0
    names = {f["name_zh"] for f in json.loads(capsys.readouterr().out)["fans"]}
    assert {"天和", "季花", "花牌"} <= names
    assert main(args) == 0  # the same hand without the situations
    names = {f["name_zh"] for f in json.loads(capsys.readouterr().out)["fans"]}
    assert not names & {"天和", "季花", "花牌"}


def test_wild_tiles_need_a_rule_set_with_wilds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fan", "**3m456p789s11sEE*", "--self-drawn"]) == 1
    assert "holds wild tiles (*), but rule set 'mcr' has none" in capsys.readouterr().err
    assert main(["fan", "--rules", "custom-nowild", "**3m456p789s11sEE*", "--self-drawn"]) == 1


def test_unknown_preset_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fan", "--rules", "riichi", "123m456m789p234s5s5s"]) == 2
    err = capsys.readouterr().err
    assert "unknown rule preset 'riichi'" in err and "custom-flowers" in err


def test_batch_under_custom_rules_checks_the_new_fields() -> None:
    lines = [
        '{"hand": "**3m456p789s11sEE*", "self_drawn": true}',
        '{"hand": "123m456m789p234s5s5s", "seat_flowers": 3, "flowers": 3}',
        '{"hand": "123m456m789p234s5s5s", "human": "yes"}',
    ]
    sink = io.StringIO()
    run_batch(io.StringIO("\n".join(lines) + "\n"), sink, load_presets()["custom"])
    first, second, third = (json.loads(line) for line in sink.getvalue().splitlines())
    assert first["total"] == 5
    assert "'seat_flowers' must be 0, 1 or 2" in second["error"]
    assert "'human' must be true or false" in third["error"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--rules", "custom", "--seat-flowers", "2"],
            "--seat-flowers must be 0..2 and at most --flowers (0), got 2",
        ),
        (
            ["--rules", "custom", "--self-drawn", "--heavenly", "--earthly"],
            "at most one of --heavenly, --earthly and --human can be set",
        ),
    ],
)
def test_options_that_do_not_fit_together_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    assert main(["fan", "123m456p789s123p55s", *options]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"guobiao fan: {message}\n" and not captured.out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--heavenly"], "--heavenly is the dealer's win on its dealt tiles"),
        (["--heavenly", "--self-drawn", "--seat-wind", "S"], "--seat-wind S"),
        (["--earthly", "--self-drawn", "--seat-wind", "S"], "--self-drawn=True"),
        (["--human"], "--human is a non-dealer's win: it needs a --seat-wind other than E"),
    ],
)
def test_impossible_starred_situations_are_refused(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    assert main(["fan", "123m456p789s123p55s", "--rules", "custom", *options]) == 2
    assert message in capsys.readouterr().err


def test_starred_options_are_the_custom_rules_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fan", "123m456p789s123p55s", "--self-drawn", "--heavenly"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("guobiao fan: --heavenly: the starred fans") and "custom rules' only" in err
    )


@pytest.mark.parametrize(
    ("hand", "options", "message"),
    [
        (
            "[123m,1]456p789s123p55s",
            ["--heavenly", "--self-drawn"],
            "--heavenly is the dealer's win on its dealt tiles, before any meld of the winner's: "
            "the hand holds none, concealed or exposed, got [123m,1]",
        ),
        ("[5555p]123p789s123m55s", ["--heavenly", "--self-drawn"], "got [5555p]"),
        ("[EEE,2]456p789s123p55s", ["--earthly", "--seat-wind", "S"], "got [EEE,2]"),
        ("[123m,1]456p789s123p55s", ["--human", "--seat-wind", "W"], "no exposed meld"),
        (
            "[5555p]123p789s123m55s",
            ["--human", "--seat-wind", "N"],
            "--human with the concealed [5555p] can only be won on its replacement tile: it "
            "needs --self-drawn and --kong (got --self-drawn=False, --kong=False)",
        ),
    ],
)
def test_a_starred_situation_the_hand_cannot_have_is_refused(
    capsys: pytest.CaptureFixture[str], hand: str, options: list[str], message: str
) -> None:
    """天和 or 地和 with a meld, 人和 with a claimed one (or a concealed kong not won on its
    replacement) cannot happen: refused as options that do not fit the hand, not scored."""
    assert main(["fan", hand, "--rules", "custom", *options]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and not captured.out
    assert captured.err.startswith("guobiao fan: --")
    # the one that can: a concealed kong declared on one's first turn, won on its replacement
    drawn = ["--human", "--seat-wind", "N", "--self-drawn", "--kong"]
    assert main(["fan", "[5555p]123p789s123m55s", "--rules", "custom", *drawn]) == 0
    assert "Human Hand" in capsys.readouterr().out


def test_batch_refuses_a_starred_situation_the_hand_cannot_have() -> None:
    lines = [
        '{"hand": "[123m,1]456p789s123p55s", "heavenly": true, "self_drawn": true}',
        '{"hand": "123m456p789s123p55s", "heavenly": true, "self_drawn": true}',
    ]
    results = list(score_lines(lines, load_presets()["custom"]))
    assert results[0] == {
        "error": "line 1: heavenly is the dealer's win on its dealt tiles, before any meld of "
        "the winner's: the hand holds none, concealed or exposed, got [123m,1]"
    }
    assert results[1]["total"] > 168


@pytest.mark.parametrize("batch", [run_batch, "score_lines"])
def test_batch_refuses_the_starred_fields_under_rules_without_them(batch: object) -> None:
    """As the options are refused (``test_starred_options_are_the_custom_rules_only``), a
    line's starred fields under mcr are an error naming the line and the fields, never scored
    without them; false or 0 is no starred situation."""
    lines = [
        '{"hand": "123m456p789s123p55s", "self_drawn": true, "heavenly": true}',
        '{"hand": "123m456p789s123p55s", "seat_wind": "S", "earthly": true, "flowers": 1, '
        '"seat_flowers": 1}',
        '{"hand": "123m456p789s123p55s", "seat_wind": "S", "human": true}',
        '{"hand": "123m456p789s123p55s", "self_drawn": true, "heavenly": false, "seat_flowers": 0}',
        '{"hand": "123m456p789s123p55s", "self_drawn": true, "heavenly": true}',
    ]
    presets = load_presets()

    def scored(rules_name: str) -> list[dict[str, object]]:
        rules = presets[rules_name]
        if batch == "score_lines":
            return list(score_lines(lines, rules))
        sink = io.StringIO()
        run_batch(io.StringIO("\n".join(lines) + "\n"), sink, rules)
        return [json.loads(line) for line in sink.getvalue().splitlines()]

    # under custom they score (and a situation remembered there is not taken under mcr)
    assert all("total" in result for result in scored("custom"))
    results = scored("mcr")
    refusal = (
        "the starred fans (天和, 地和, 人和, 季花) are the custom rules' only; rule set 'mcr' "
        "has none"
    )
    assert results[0] == {"error": f"line 1: 'heavenly': {refusal}"}
    assert results[1] == {"error": f"line 2: 'earthly', 'seat_flowers': {refusal}"}
    assert results[2] == {"error": f"line 3: 'human': {refusal}"}
    assert "total" in results[3]
    assert results[4] == {"error": f"line 5: 'heavenly': {refusal}"}
