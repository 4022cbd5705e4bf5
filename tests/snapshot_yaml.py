"""A syrupy extension that stores each snapshot as one plain .yaml file, so a PR shows a YAML diff.

Files are named for the fixture alone (`__snapshots__/test_snapshots/prefill-decode-kimi-k2.yaml`),
and hold the exact bytes `render` prints.
"""

from __future__ import annotations

from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class YamlSnapshotExtension(SingleFileSnapshotExtension):
    file_extension = "yaml"
    _write_mode = WriteMode.TEXT

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        if isinstance(index, str):
            return index
        return str(super().get_snapshot_name(test_location=test_location, index=index))

    def serialize(self, data: Any, **kwargs: Any) -> str:
        if not isinstance(data, str):
            raise TypeError("YAML snapshots hold the exact text render prints")
        return data
