"""Where the feature files are, and the requirement catalogue that goes with them."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict


class Requirement(BaseModel):
    """One entry of the requirement catalogue."""

    model_config = ConfigDict(frozen=True)
    id: str
    title: str
    #: `must`: a library that fails it does not conform; `should`: recommended, reported apart.
    level: Literal["must", "should"] = "must"
    #: `core`, or the capability a binding must claim for the requirement to apply.
    profile: str


def features_dir() -> Path:
    """The feature files: inside the installed package, or at the top of a source checkout."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "features", package.parent / "features"):
        if (candidate / "requirements.toml").is_file():
            return candidate
    raise FileNotFoundError(
        "react-conformance cannot find its feature files (features/requirements.toml) in the "
        "package or beside it; reinstall react-conformance."
    )


@cache
def catalogue() -> dict[str, Requirement]:
    """The requirements by ID, in catalogue order."""
    with (features_dir() / "requirements.toml").open("rb") as f:
        data = tomllib.load(f)
    return {rid: Requirement(id=rid, **entry) for rid, entry in data.items()}
