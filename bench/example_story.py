"""What the example agents' own memories keep of the built-in story, in the workbench. Run on demand:

    python bench/example_story.py

The built-in chronology (a correction of module and database, a forget of the customer) goes through
`examples/agents` as `workbench examples/agents` runs them (the one start path, `session_start`),
the support turns to triage (a FileHistoryProvider) and the logs turns to notes (memory files its
model writes). Then every file under the agents' data folder is scanned byte by byte for each value
the story declared, as typed and as JSON escapes it; then everything is forgotten and the files are
scanned again. A temporary data folder and agents' folder are used and removed."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def holding(folder: Path, value: str) -> list[str]:
    forms = {value.encode(), json.dumps(value)[1:-1].encode(), json.dumps(value, ensure_ascii=False)[1:-1].encode()}
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and any(f in p.read_bytes() for f in forms)
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["WORKBENCH_DATA_DIR"] = str(Path(scratch) / "data")
        os.environ["EXAMPLE_AGENTS_DATA"] = data = str(Path(scratch) / "example-data")
        from workbench.chronology import load_chronology
        from workbench.chronology_file import FORGET_ALL
        from workbench.cli.configs import model_config
        from workbench.cli.parser import parse
        from workbench.cli.start import load_agents, session_start

        story = load_chronology()
        args = parse([str(ROOT / "examples" / "agents")])
        session = session_start(args, model_config(args), load_agents(args))()
        for step in story.steps:
            if step.forget:
                report = await session.forget(None if step.forget == FORGET_ALL else step.forget)
                print(f"forget {step.forget}: {report.describe()}")
            if step.say is not None:
                await session.ask("triage" if step.agent == "support" else "notes", step.say)
        values = sorted(
            {v for e in story.expectations for vs in (e.current,) for v in vs.values()}
            | {v for e in story.expectations for vs in e.superseded.values() for v in vs}
            | {v for e in story.expectations for vs in e.forgotten.values() for v in vs}
        )
        print(
            f"\nafter the story ({story.name}, {story.turns} turns): facts "
            f"{ {f.key: f.value for f in session.state().memory.facts} }"
        )
        for value in values:
            print(f"  {value!r}: {', '.join(holding(Path(data), value)) or 'in no file'}")
        report = await session.forget(None)
        print(f"\nforget everything: {report.describe()}")
        for value in values:
            print(f"  {value!r}: {', '.join(holding(Path(data), value)) or 'in no file'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    asyncio.run(main())
