"""The validator applies every schema keyword the CRD uses: a new keyword in the CRD fails here, not in silence."""

from __future__ import annotations

import copy

from modelplane_render import crd
from modelplane_render.validation.structural import KEYWORDS, unknown_keywords


def test_every_keyword_of_the_crd_s_schema_is_one_the_validator_applies() -> None:
    assert unknown_keywords(crd.openapi_schema()) == []


def test_a_keyword_the_validator_does_not_apply_is_found_wherever_it_is() -> None:
    schema = copy.deepcopy(crd.openapi_schema())
    engines = schema["properties"]["spec"]["properties"]["engines"]
    engines["items"]["properties"]["name"]["format"] = "hostname"
    schema["properties"]["metadata"]["oneOf"] = [{"required": ["name"]}]
    assert unknown_keywords(schema) == [".metadata: oneOf", ".spec.engines.items.name: format"]
    assert "format" not in KEYWORDS and "oneOf" not in KEYWORDS
