"""The docs tell the truth about the code: the README's rulesets and invite permissions, the
commands of docs/commands.md, the `faguan` command line and config keys they name, and references
that stay inside the repository.

`FAGUAN_WRITE_DOCS=1 .venv/bin/pytest tests/discord/test_docs.py` rewrites the generated reference of
docs/commands.md from the command tree (then the test checks the rest of the page against it).
"""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio
from discord import AppCommandOptionType, Locale, app_commands
from envclock import EnvClock
from gamebot import BotEnv, make_bot

from bot.cli import build_parser, main
from bot.config import ALL_KEYS, LAYOUT
from bot.discord.client import FaguanBot
from bot.discord.required_permissions import REQUIRED_PERMISSIONS
from bot.discord.translator import FaguanTranslator
from bot.operator_errors import Exit
from engine.model import Camp, Team
from engine.rulesets import RULESETS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
COMMANDS_MD = ROOT / "docs" / "commands.md"
BEGIN = "<!-- BEGIN generated: FAGUAN_WRITE_DOCS=1 .venv/bin/pytest tests/discord/test_docs.py rewrites this -->"
END = "<!-- END generated -->"


def section(text: str, heading: str) -> str:
    """The text under a Markdown heading, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n") + len(heading) + 1
    stop = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, start)
    return text[start : stop.start() if stop else len(text)]


# --------------------------------------------------------------------------- README


def test_readme_lists_every_ruleset_as_faguan_rulesets_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    listed = re.findall(r"`([a-z0-9_]+)`\s+\(([^)]+)\)", section(README, "## Rulesets"))
    listed = [(rid, " ".join(name.split())) for rid, name in listed]
    assert listed == [(r.id, r.name_zh) for r in RULESETS.values()]
    assert main(["rulesets"]) == 0
    cli = capsys.readouterr().out.splitlines()
    assert [rid for rid, _name in listed] == [line.split()[0] for line in cli]
    assert all(name in line for (_rid, name), line in zip(listed, cli, strict=True))


DISCORD_NAMES = {  # what Discord's invite and role screens call each permission
    "manage_roles": "Manage Roles",
    "manage_channels": "Manage Channels",
    "manage_threads": "Manage Threads",
    "manage_messages": "Manage Messages",
    "create_private_threads": "Create Private Threads",
    "create_public_threads": "Create Public Threads",
    "view_channel": "View Channels",
    "send_messages": "Send Messages",
    "send_messages_in_threads": "Send Messages in Threads",
    "read_message_history": "Read Message History",
    "add_reactions": "Add Reactions",
    "embed_links": "Embed Links",
    "attach_files": "Attach Files",
}


def test_readme_invite_permissions_are_what_the_bot_checks() -> None:
    step = re.search(r"^2\. Invite it .*?(?=^\d\. )", README, re.M | re.S)
    assert step is not None
    text = " ".join(step.group(0).split())
    names = re.search(r"the permissions (.*?) — the link", text)
    assert names is not None
    assert names.group(1).split(", ") == [DISCORD_NAMES[p] for p in REQUIRED_PERMISSIONS]
    assert list(REQUIRED_PERMISSIONS.values()) == [DISCORD_NAMES[p] for p in REQUIRED_PERMISSIONS]
    link = re.search(r"permissions=(\d+)", text)
    assert link is not None
    wanted = discord.Permissions(**dict.fromkeys(REQUIRED_PERMISSIONS, True))
    assert int(link.group(1)) == wanted.value


# --------------------------------------------------------------------------- the operator's path

USER_DOCS = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]
"""What users read: the README and docs/*.md (docs/dev/ is for the project's developers)."""


def _user_docs() -> str:
    return "\n".join((ROOT / name).read_text("utf-8") for name in USER_DOCS)


def _subcommands(
    parser: argparse.ArgumentParser, path: str = "faguan"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command of the command line, with its path (`faguan db backup`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{path} {name}", sub
                yield from _subcommands(sub, f"{path} {name}")


def test_every_cli_command_and_flag_is_in_the_docs() -> None:
    """Each `faguan` command and each of its flags is named in the README or docs/*.md (`faguan
    bench`'s flags are listed with their defaults by `faguan bench --help`)."""
    docs = _user_docs()
    missing = []
    for path, sub in _subcommands(build_parser()):
        if path not in docs:
            missing.append(path)
        if path == "faguan bench":
            continue
        flags = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
        missing += [f"{path} {flag}" for flag in flags if flag != "--help" and flag not in docs]
    assert missing == []


def test_faguan_run_help_gives_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    """The README sends the operator to `faguan run --help` for the exit statuses: each one a
    failure can end with is there, by its number."""
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    missing = [code for code in Exit if code > Exit.BUG and f" {int(code)} " not in said]
    assert missing == []


def test_config_keys_named_in_the_docs_exist() -> None:
    """A config key the docs name (`game.timezone`, `[backup] folder`) is one the bot reads:
    a key renamed in the code is renamed in the docs too."""
    docs = _user_docs() + (ROOT / "config.example.toml").read_text("utf-8")
    sections = "|".join(re.escape(s) for s in LAYOUT if s)
    dotted = re.findall(rf"`((?:{sections})\.[a-z_]+)`", docs)
    headed = re.findall(rf"`\[({sections})\] ([a-z_]+)`", docs)
    named = {*dotted, *(f"{section}.{key}" for section, key in headed)}
    assert {"game.timezone", "backup.folder", "metrics.port"} <= named
    assert sorted(named - set(ALL_KEYS) - {"game.py"}) == []


# --------------------------------------------------------------------------- references


def _texts() -> Iterator[tuple[Path, str]]:
    for top in (
        "README.md",
        "config.example.toml",
        "docs",
        "bot",
        "engine",
        "tests",
        "bench",
        "migrations",
    ):
        path = ROOT / top
        files = (
            [path]
            if path.is_file()
            else sorted(p for p in path.rglob("*") if p.suffix in (".md", ".py", ".toml"))
        )
        for file in files:
            yield file, file.read_text("utf-8")


def test_every_reference_stays_inside_the_repository() -> None:
    shared = "shared"  # spelled apart so that this file does not find itself
    outside = ["RULES" + ".md", f"../{shared}/", f"{shared}/rules", f"{shared}/seeds"]
    found = [
        f"{file.relative_to(ROOT)}: {word}"
        for file, text in _texts()
        for word in outside
        if word in text
    ]
    assert found == []


def test_rule_section_references_name_sections_that_exist() -> None:
    rules = (ROOT / "docs" / "rules.md").read_text("utf-8")
    sections = set(re.findall(r"^##+ (\d+(?:\.\d+)?)\.? ", rules, re.M))
    cited = {
        (str(file.relative_to(ROOT)), number)
        for file, text in _texts()
        for number in re.findall(r"docs/rules\.md`?\s*§\s*(\d+(?:\.\d+)?)", text)
    }
    assert cited, "the repository cites docs/rules.md sections"
    assert sorted(c for c in cited if c[1] not in sections) == []


def test_docs_named_in_the_docs_exist() -> None:
    named = {
        (str(file.relative_to(ROOT)), ref)
        for file, text in _texts()
        if file.suffix == ".md" or file.name == "README.md"
        for ref in re.findall(r"`((?:docs|tests)/[\w/.-]+\.(?:md|toml|py))`", text)
    }
    assert sorted((where, ref) for where, ref in named if not (ROOT / ref).exists()) == []


def test_rules_reference_covers_every_ruleset() -> None:
    rules = (ROOT / "docs" / "rules.md").read_text("utf-8")
    table = dict(
        re.findall(r"^\| `([a-z0-9_]+)` \| ([^|]+?) \|", section(rules, "## 3. The rulesets"), re.M)
    )
    assert table == {r.id: r.name_zh for r in RULESETS.values()}
    for rid in RULESETS:
        page = ROOT / "docs" / "rulesets" / f"{rid}.md"
        own_page = f"`docs/rulesets/{rid}.md`" in rules
        assert own_page == page.exists(), rid
        headings = [line for line in rules.splitlines() if line.startswith("### ")]
        described = any(f"`{rid}`" in h for h in headings) or f"\n- `{rid}` (" in rules
        assert described, f"{rid} has no entry in docs/rules.md §3"


# --------------------------------------------------------------------------- docs/commands.md

KINDS = {
    AppCommandOptionType.string: "text",
    AppCommandOptionType.integer: "integer",
    AppCommandOptionType.number: "number",
    AppCommandOptionType.boolean: "true/false",
    AppCommandOptionType.user: "member",
    AppCommandOptionType.channel: "channel",
    AppCommandOptionType.role: "role",
    AppCommandOptionType.mentionable: "member or role",
    AppCommandOptionType.attachment: "file",
}

Leaf = app_commands.Command[Any, ..., Any]


def leaves(items: list[Any]) -> Iterator[Leaf | app_commands.ContextMenu]:
    for item in items:
        if isinstance(item, app_commands.Group):
            yield from leaves(list(item.commands))
        else:
            yield item


async def _zh(text: str) -> str:
    got = await FaguanTranslator().translate(app_commands.locale_str(text), Locale.chinese, None)  # type: ignore[arg-type]
    return got or "—"


def _takes(param: app_commands.Parameter) -> str:
    parts = [KINDS.get(param.type, param.type.name)]
    if param.min_value is not None or param.max_value is not None:
        parts[0] += f" {param.min_value}–{param.max_value}"
    parts.append("required" if param.required else "optional")
    if param.choices:
        parts.append("choices " + ", ".join(f"`{c.value}`" for c in param.choices))
    if param.autocomplete:
        parts.append("suggested")
    if not param.required and param.default not in (None, discord.utils.MISSING):
        parts.append(f"default `{param.default}`")
    return ", ".join(parts)


async def reference(bot: FaguanBot) -> str:
    """The generated reference: every command and option with its zh-CN name."""
    rows = [
        "| command · option | zh-CN | takes | description · zh-CN |",
        "|---|---|---|---|",
    ]
    for command in leaves(bot.tree.get_commands()):
        if isinstance(command, app_commands.ContextMenu):
            rows.append(
                f"| **{command.name}** | {await _zh(command.name)} | {command.type.name} menu | |"
            )
            continue
        path = command.qualified_name.split()
        zh_path = " ".join([await _zh(part) for part in path])
        description = f"{command.description} · {await _zh(str(command.description))}"
        rows.append(f"| **`/{command.qualified_name}`** | `/{zh_path}` | | {description} |")
        for param in command.parameters:
            said = f"{param.description} · {await _zh(str(param.description))}"
            rows.append(
                f"| ↳ `{param.name}` | `{await _zh(param.name)}` | {_takes(param)} | {said} |"
            )
    return "\n".join(rows) + "\n"


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[FaguanBot]:
    """The bot after a real start (setup_hook: every cog, the translator)."""
    clock = EnvClock()
    made = make_bot(tmp_path / "g.db", clock)
    env = BotEnv(made)
    clock.bind(env)
    await env.start()
    try:
        yield made
    finally:
        await env.shutdown()


async def test_commands_doc_is_the_command_tree(bot: FaguanBot) -> None:
    text = COMMANDS_MD.read_text("utf-8")
    head, rest = text.split(BEGIN + "\n")
    generated, tail = rest.split(END)
    wanted = await reference(bot)
    if os.environ.get("FAGUAN_WRITE_DOCS") == "1":
        COMMANDS_MD.write_text(head + BEGIN + "\n" + wanted + END + tail, "utf-8")
        generated = wanted
    assert generated == wanted, (
        "run: FAGUAN_WRITE_DOCS=1 .venv/bin/pytest tests/discord/test_docs.py"
    )


def _options(options: list[dict[str, Any]], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every option of a command's payload, with its command's path (subcommands walked)."""
    for option in options:
        if option["type"] in (1, 2):  # a subcommand, a subcommand group
            yield from _options(option.get("options", []), f"{path} {option['name']}")
        else:
            yield path, option


async def test_every_option_says_what_it_takes_in_both_languages(bot: FaguanBot) -> None:
    """Discord shows an option's description while it is filled in: a real one (not discord.py's
    placeholder `…`, nor the option's own name), within Discord's 100 characters, in zh-CN too;
    a fixed choice's name in zh-CN too. Read from the payload discord.py sends at sync, which
    asks the translator only for a `locale_str` (a plain str would stay English)."""
    translator = FaguanTranslator()
    wrong = []
    for command in bot.tree.get_commands():
        if isinstance(command, app_commands.ContextMenu):  # no options
            continue
        payload = await command.get_translated_payload(bot.tree, translator)
        for path, option in _options(payload.get("options", []), f"/{payload['name']}"):
            where = f"{path} {option['name']}"
            description = option["description"]
            zh = option.get("description_localizations", {}).get(Locale.chinese.value)
            if description in ("…", option["name"]) or not 1 <= len(description) <= 100:
                wrong.append(f"{where}: {description!r}")
            if zh is None or not 1 <= len(zh) <= 100:
                wrong.append(f"{where}: zh-CN {zh!r}")
            for choice in option.get("choices", []):
                zh_name = choice.get("name_localizations", {}).get(Locale.chinese.value)
                if zh_name is None or len(choice["name"]) > 100 or len(zh_name) > 100:
                    wrong.append(f"{where} {choice['value']}: zh-CN {zh_name!r}")
    assert wrong == []


async def test_commands_doc_explains_every_command_and_option(bot: FaguanBot) -> None:
    prose = COMMANDS_MD.read_text("utf-8").split(BEGIN)[0]
    missing = []
    for command in leaves(bot.tree.get_commands()):
        name = (
            command.name
            if isinstance(command, app_commands.ContextMenu)
            else f"/{command.qualified_name}"
        )
        heading = f"### `{name}`"
        if heading not in prose:
            missing.append(heading)
            continue
        body = section(prose, heading)
        params = [] if isinstance(command, app_commands.ContextMenu) else command.parameters
        own = [p.name for p in params if p.name != "game_id"]
        missing += [f"{name} {option}" for option in own if f"`{option}`" not in body]
        if any(p.name == "game_id" for p in params) and "game_id" not in body:
            missing.append(f"{name} game_id")
    assert missing == []


def test_commands_doc_lists_every_result_and_team() -> None:
    """`/mod end` and `/mod penalty` take a result and a team typed or suggested (no fixed
    choices, so the generated reference cannot list them): the prose does, every one."""
    prose = COMMANDS_MD.read_text("utf-8").split(BEGIN)[0]
    end = section(prose, "### `/mod end`")
    penalty = section(prose, "### `/mod penalty`")
    missing = [f"/mod end {c.value}" for c in Camp if f"`{c.value}`" not in end]
    missing += [f"/mod penalty {t.value}" for t in Team if f"`{t.value}`" not in penalty]
    assert missing == []


def _catalog_texts(data: dict[str, Any]) -> Iterator[str]:
    for value in data.values():
        if isinstance(value, dict):
            yield from _catalog_texts(value)
        elif isinstance(value, str):
            yield value


def test_bot_answers_quoted_in_the_docs_are_the_catalog_texts() -> None:
    """An answer of the bot quoted in Chinese in docs/commands.md or docs/moderators.md
    (「只能在平票者（…）中选择。」, "该轮已经看表结算…") is a text of the zh-CN catalog (`…` for a
    value it names): a text reworded there is reworded in the docs too."""
    catalog = tomllib.loads((ROOT / "bot/records/locale/zh-CN.toml").read_text("utf-8"))
    texts = list(_catalog_texts(catalog))
    quoted = re.compile(r"「([^」\n]+)」|\"([^\"\n]+)\"|“([^”\n]+)”")
    stale = []
    for name in ("commands.md", "moderators.md"):
        for match in quoted.finditer((ROOT / "docs" / name).read_text("utf-8")):
            quote = next(group for group in match.groups() if group)
            if not (re.search(r"[\u4e00-\u9fff]", quote) and re.search(r"[。，：]", quote)):
                continue  # a name or a term, not an answer
            shape = ".*".join(re.escape(part) for part in quote.rstrip("。").split("…"))
            if not any(re.search(shape, said) for said in texts):
                stale.append(f"docs/{name}: {quote}")
    assert stale == []
