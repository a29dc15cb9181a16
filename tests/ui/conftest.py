import pytest

from workbench.ui.confirm import ConfirmForget


@pytest.fixture(autouse=True)
def _quick_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person needs the forget question on screen for half a second before a "y" counts; the tests
    that answer it as a person read it in a twentieth (33 answers, 15 s of waiting a run). The guard's
    own tests keep the real half second."""
    if request.module.__name__.endswith("test_confirmation"):
        return
    monkeypatch.setattr(ConfirmForget, "GUARD_SECONDS", 0.05)
