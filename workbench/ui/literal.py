"""Text from people and models, made safe to show as it was written."""

from workbench.tables import literal
from workbench.text import visible

__all__ = ["literal", "visible"]
