"""What the parsed command line asks for, as the typed configurations the rest of the workbench takes: read
and checked in one place, `workbench.build.config` (`StartConfig`, and each part's reader, which the tests
use on their own); `workbench.cli.dispatch` reads it before any command runs, so a bad one stops every
command."""

from workbench.build.config import StartConfig, agent_memory_config, contract_config, model_config, recall_config

__all__ = ["StartConfig", "agent_memory_config", "contract_config", "model_config", "recall_config"]
