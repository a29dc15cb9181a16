"""What a library logs before and while the window is open is said in a notice (`workbench.notes`),
not written over the window; once the window is gone it waits for the command to say it."""

from __future__ import annotations

import logging

from tests.ui.helpers import scripted_session
from workbench.notes import LibraryLog
from workbench.ui.app import WorkbenchApp

WARNING = "The provided chat client does not support function invoking, this might limit agent capabilities."


async def test_a_librarys_warnings_are_notices_while_the_window_is_open() -> None:
    logged = LibraryLog()
    logger = logging.getLogger("tests.ui.notes.agent_framework")
    logger.handlers, logger.propagate = [logged], False
    logger.warning(WARNING)  # at import, before the window opens
    app = WorkbenchApp(scripted_session(), logged=logged)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause()
        logger.warning("error connecting in 'pool-1': connection is bad")
        await pilot.pause()
        said = [n.message for n in app._notifications if n.title == "Logged by a library"]
        assert said == [
            f"tests.ui.notes.agent_framework: {WARNING}",
            "tests.ui.notes.agent_framework: error connecting in 'pool-1': connection is bad",
        ]
    logger.warning("closing the pool")
    assert logged.send_to(None) == ["tests.ui.notes.agent_framework: closing the pool"]
