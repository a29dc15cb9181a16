"""The session over a runtime built by the one builder (`workbench.build.builder.build`, which lists every
holder in the order a forget reaches them and registers them, the session's own in their slot):
`assemble(models, ...)` takes the builder's options (`AgentRuntime`'s, and `persisted`, `histories`,
`redis`) and returns the `SessionController` around the runtime. The CLI's start builds through
`workbench.build.builder.starting` with the same wrapper."""

from __future__ import annotations

from functools import partial

from workbench.build.builder import build
from workbench.session.controller import SessionController

assemble = partial(build, around=SessionController)
