"""Which engine release an image runs, and whether a flag we add exists in it.

A flag the engine's parser doesn't know stops it at start ("unrecognized arguments"), on every pod of
the fleet. So each flag we add that is younger than the oldest release anyone still runs carries the
release that introduced it (EngineFacts.since), and the image's tag says which release it runs, for the
images whose tags are the engine's own releases: vllm/vllm-openai:v0.23.0, lmsysorg/sglang:v0.5.12.post1-cu129.
Another image (llm-d's, a company's build, a digest, `latest`) says nothing we can read.

What is done with a flag, by what it is for:
- a flag the shape needs (a gang's, a prefill/decode transfer's): added when the release has it or is
  unknown (without it the engine can't work at all); refused, naming the release it needs, when the
  tag names an older one;
- a flag that only improves (quieter logs): added only when the tag names a release that has it.
"""

from __future__ import annotations

import re
from typing import Optional

Version = tuple[int, int, int]

# The tag of a release image: v0.23.0, 0.23.0, v0.5.12.post1-cu129 (SGLang's CUDA builds).
_RELEASE_TAG = re.compile(r"^v?([0-9]{1,4})\.([0-9]{1,4})\.([0-9]{1,4})(?:[.+-].*)?\Z")


def image_version(image: str, repositories: tuple[str, ...]) -> Optional[Version]:
    """The release an image of one of the engine's own repositories runs, from its tag (None: not known)."""
    name = image.split("@", 1)[0]
    repository, colon, tag = name.rpartition(":")
    if not colon or "/" in tag:  # no tag at all (a registry port is not one)
        return None
    if not any(repository == r or repository.endswith("/" + r) for r in repositories):
        return None
    found = _RELEASE_TAG.match(tag)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def parse(version: str) -> Version:
    major, minor, patch = (int(part) for part in version.split("."))
    return major, minor, patch


def shown(version: Version) -> str:
    return ".".join(str(part) for part in version)
