import pytest

from tests.support.openai_server import LoopbackOpenAI


@pytest.fixture
def loopback():
    with LoopbackOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_ambient_openai_settings(monkeypatch):
    """Tests never see the developer's own OpenAI settings."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_CHAT_COMPLETION_MODEL"):
        monkeypatch.delenv(name, raising=False)
