"""Which recorded settings must agree between outputs that are used together.

A finished shard is skipped by a resumed sharded run only when the run would make it again the
same way, and ``merge`` joins only shards made the same way: one tokenizer, vocabulary (with its
DEAD tokens), hash spec, boundary policy, masking convention, row storage (stored, or computed
from the tokens) and tokenization (``special``, ``add_eot`` and its token, the records' text key,
``doc_sep``, ``errors``, a forced input form, a chat template). Both ask
:func:`settings_difference`, so they can never disagree on what "the same way" means. A manifest
written before ``tokenization`` was recorded (format 1.0) differs from every manifest that records
it: what it did with special tokens is unknown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .index import row_storage

NOT_RECORDED = "not recorded (written by an older ngramtool)"
# What a reader gives for a setting a manifest does not describe: not compared (saved type counts
# describe no rows, and any row storage gives the same counts).
_NOT_DESCRIBED = object()
# (label naming the setting and the `parameters` that set it, how to read it from a manifest);
# compared in this order.
_TOP_LEVEL = (
    ("tokenizer (`tokenizer`)", lambda m: (m.get("tokenizer") or {}).get("fingerprint")),
    (
        "vocabulary (`tokenizer`, `no_compress`, `vocab_size`, `mask_tokens`)",
        lambda m: m["vocab"]["fingerprint"],
    ),
    ("hash spec", lambda m: m["spec"]["fingerprint"]),
    ("boundary (`boundary`)", lambda m: m["boundary"]),
    ("masked tokens (`negative_ids`)", lambda m: m.get("negative_ids", "mask")),
    ("row storage (`rows`)", lambda m: row_storage(m) if "rows" in m else _NOT_DESCRIBED),
)
_TOKENIZATION_LABELS = {
    "input": "input kind (text, or ids from `tokens_file`)",
    "special": "special-token rule (`special`)",
    "add_eot": "`add_eot`",
    "eot": "end-of-sequence token (`eot_token`)",
    "document_prefix": "post-processor tokens before each document",
    "document_suffix": "post-processor tokens after each document",
    "json_key": "key or column of the text (`text_key`)",
    "doc_sep": "`doc_sep`",
    "errors": "`errors`",
    "format": "input form (`input_format`)",
    "chat_template": "chat template (`chat_template`)",
}


@dataclass(frozen=True)
class SettingDifference:
    """A setting on which two manifests differ, with each one's value as shown to the user."""

    setting: str
    ours: str
    theirs: str


def settings_difference(ours: dict[str, Any], theirs: dict[str, Any]) -> SettingDifference | None:
    """The first setting (tokenizer, vocabulary, hash spec, boundary, then each tokenization field)
    on which two manifests (or a manifest and the one a run would write) differ, or None."""
    for label, read in _TOP_LEVEL:
        mine, other = read(ours), read(theirs)
        if mine != other and _NOT_DESCRIBED not in (mine, other):
            return SettingDifference(label, _shown(mine), _shown(other))
    mine_all, other_all = ours.get("tokenization"), theirs.get("tokenization")
    if (mine_all is None) != (other_all is None):
        shown = ("recorded", NOT_RECORDED) if other_all is None else (NOT_RECORDED, "recorded")
        return SettingDifference("tokenization", *shown)
    if mine_all is None or other_all is None:
        return None
    for field in sorted({*mine_all, *other_all}, key=_field_order):
        mine, other = _comparable(field, mine_all.get(field)), _comparable(field, other_all.get(field))
        if mine != other:
            return SettingDifference(_TOKENIZATION_LABELS.get(field, field), _shown(mine), _shown(other))
    return None


def _comparable(field: str, value: Any) -> Any:
    """What of a tokenization field decides the ids: the end-of-sequence token's id and string,
    not where it was found (a config, a post-processor or --eot-token); a chat template's text and
    special tokens, not the file that held it."""
    if field in ("eot", "chat_template") and isinstance(value, dict):
        return {key: item for key, item in value.items() if key != "source"}
    return value


def _field_order(field: str) -> tuple[int, str]:
    """Known tokenization fields in their documented order, unknown ones after them."""
    known = list(_TOKENIZATION_LABELS)
    return (known.index(field) if field in known else len(known), field)


def _shown(value: Any) -> str:
    """A value as the message shows it: fingerprints shortened, the rest as JSON."""
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12] + "..."
    return json.dumps(value, ensure_ascii=False)
