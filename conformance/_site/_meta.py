"""What the site says about libraries and topics, read from `libraries.toml` beside this module:
data, not code, so introducing a library is an edit of that file."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

DATA = Path(__file__).with_name("libraries.toml")


class Library(BaseModel):
    """One library (or one opt-in variant of a library, `variant_of` naming it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    what: str = ""
    language: str = ""
    package: str = ""
    home: str = ""
    binding: str = ""
    variant_of: str = ""
    turns_on: str = ""


class Topic(BaseModel):
    """A column of the first screen: the requirements it groups, in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    requirements: list[str]


class Suite(BaseModel):
    """The suite's own facts."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    repository: str = ""
    base_url: str = ""
    baseline: str = "reference"


class Meta(BaseModel):
    """The whole data file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    suite: Suite = Suite()
    topics: list[Topic] = Field(default_factory=list)
    libraries: dict[str, Library] = Field(default_factory=dict)

    def library(self, name: str) -> Library:
        """A library's facts; a variant inherits its library's (language, package, binding)."""
        own = self.libraries.get(name)
        base_name = own.variant_of if own and own.variant_of else name.split("+", 1)[0]
        base = self.libraries.get(base_name, Library())
        if own is None:
            return base.model_copy(update={"variant_of": base_name}) if base_name != name else Library()
        if not own.variant_of:
            return own
        return base.model_copy(update={"variant_of": own.variant_of, "turns_on": own.turns_on,
                                       **{k: v for k, v in own.model_dump().items() if v}})

    def topic_of(self, rid: str) -> str:
        """The topic an ID belongs to; "Other" for one no topic lists (a newer suite's)."""
        return next((t.name for t in self.topics if rid in t.requirements), "Other")


@cache
def meta(path: Path = DATA) -> Meta:
    """The data file, read once."""
    with path.open("rb") as f:
        return Meta.model_validate(tomllib.load(f))
