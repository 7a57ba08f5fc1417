"""What deleting a dataset, job or namespace asks of the store: markers that hide it from the
model's reads until an event stored after the deletion mentions it (see deletions_sql)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class DeletionMarkers(ABC):
    """Soft deletion: the events stay; the model's reads skip what a marker hides."""

    @abstractmethod
    def hide_node(self, node_id: str, kind: str, namespace: str, now: str) -> None:
        """Mark a dataset or job (by node id) deleted as of the newest stored event."""

    @abstractmethod
    def hide_namespace(self, name: str, now: str) -> None:
        """Mark a namespace and every dataset and job of it deleted as of the newest stored event."""

    @abstractmethod
    def hidden_nodes(self, node_ids: Sequence[str]) -> set[str]:
        """Those of the dataset and job ids that a marker hides (their own or their namespace's)."""

    @abstractmethod
    def has_deletions(self) -> bool:
        """Whether any marker exists (reads skip the filter when none does)."""
