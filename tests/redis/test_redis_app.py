"""The whole app as `workbench --persist redis://…` opens it (one test): the histories go to the server
in the app's own event loop, and a second start shows each pane its resumed conversation from there."""

from __future__ import annotations

import secrets

from tests.redis.server import RedisServer
from tests.redis.test_redis_persist import quit_
from tests.ui.helpers import say, start_ended
from tests.ui.test_resumed import shown
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app
from workbench.ui.app import WorkbenchApp

SIZE = (160, 50)


def cli_app(server: RedisServer) -> WorkbenchApp:
    args = build_parser().parse_args(["--persist", server.url])
    return build_app(args, model_config(args))


async def test_a_second_start_resumes_the_histories_kept_on_the_server(tmp_path, monkeypatch, redis_server):
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))
    text = f"module=Reporting-{secrets.token_hex(4)}"
    first = cli_app(redis_server)
    async with first.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        await say(pilot, "support", text)
        answer = [t for kind, t in shown(first, "support") if kind == "agent"]
    await quit_(first.session.runtime)
    assert len(redis_server.server.keys("*")) == 1  # the support agent's list

    second = cli_app(redis_server)
    async with second.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        support = shown(second, "support")
        assert support[0][1].startswith("Resumed from ") and f"the histories: {redis_server.url}" in support[0][1]
        assert support[1:] == [("user", text), ("agent", answer[0]), ("notice", "End of the resumed conversation.")]
        assert "resumed: 2 message(s), 1 fact(s)" in second.sub_title
    await quit_(second.session.runtime)
