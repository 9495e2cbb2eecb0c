"""Callable signatures in apidrift's own model: ordered parameters, as CPython sees them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any


class ParamKind(str, Enum):
    """The five parameter kinds of `inspect.Parameter`, in their required order."""

    POSITIONAL_ONLY = "positional-only"
    POSITIONAL_OR_KEYWORD = "positional-or-keyword"
    VAR_POSITIONAL = "var-positional"
    KEYWORD_ONLY = "keyword-only"
    VAR_KEYWORD = "var-keyword"


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: ParamKind
    has_default: bool = False
    default: str | None = None  # source text of the default, for display
    annotation: str | None = None  # source text of the annotation, for display
    # A `None` default the function's body replaces at once by a value known for certain (`if x is None:
    # x = self.x`, see analyses/defaults.py): that value's source text, what omitting the argument means.
    replaced_by: str | None = field(default=None, compare=False)
    # The annotation with its module's type aliases written out (`Literal['lazy', 'eager'] | None` for
    # `LoadStrategy | None`), when it names any (see analyses/aliases.py): what judgements of it read.
    annotation_expanded: str | None = field(default=None, compare=False)

    @property
    def required(self) -> bool:
        return not self.has_default and self.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)

    def render(self) -> str:
        text = self.name
        if self.kind is ParamKind.VAR_POSITIONAL:
            text = "*" + text
        elif self.kind is ParamKind.VAR_KEYWORD:
            text = "**" + text
        if self.annotation:
            text += f": {self.annotation}"
        if self.has_default:
            default = self.default if self.default is not None else "..."
            text += f" = {default}" if self.annotation else f"={default}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "has_default": self.has_default,
            "default": self.default,
            "annotation": self.annotation,
            **({"replaced_by": self.replaced_by} if self.replaced_by is not None else {}),
            **(
                {"annotation_expanded": self.annotation_expanded}
                if self.annotation_expanded is not None
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Parameter:
        return cls(
            name=data["name"],
            kind=ParamKind(data["kind"]),
            has_default=data["has_default"],
            default=data.get("default"),
            annotation=data.get("annotation"),
            replaced_by=data.get("replaced_by"),
            annotation_expanded=data.get("annotation_expanded"),
        )


@dataclass(frozen=True)
class Signature:
    parameters: tuple[Parameter, ...]
    returns: str | None = None  # source text of the return annotation

    def bound(self) -> Signature:
        """The signature seen through an instance or class: the first parameter is already given."""
        cached = self.__dict__.get("_bound")  # asked for at every call of a method: made once
        if cached is not None:
            return cached
        params = self.parameters
        result = self  # `def f(*args)` used as a method keeps its *args
        if params and params[0].kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD):
            result = replace(self, parameters=params[1:])
        self.__dict__["_bound"] = result  # not a field: equality, hashing and `replace` ignore it
        return result

    def get(self, name: str) -> Parameter | None:
        for param in self.parameters:
            if param.name == name:
                return param
        return None

    @property
    def accepts_any_keyword(self) -> bool:
        return any(p.kind is ParamKind.VAR_KEYWORD for p in self.parameters)

    @property
    def accepts_any_positional(self) -> bool:
        return any(p.kind is ParamKind.VAR_POSITIONAL for p in self.parameters)

    def render(self) -> str:
        """`(a, b: int = 1, *, c, **kw) -> R`, with `/` and `*` markers as Python writes them."""
        parts: list[str] = []
        kinds = [p.kind for p in self.parameters]
        for index, param in enumerate(self.parameters):
            if param.kind is ParamKind.KEYWORD_ONLY and ParamKind.VAR_POSITIONAL not in kinds[:index]:
                if index == 0 or kinds[index - 1] is not ParamKind.KEYWORD_ONLY:
                    parts.append("*")
            parts.append(param.render())
            is_last_positional_only = param.kind is ParamKind.POSITIONAL_ONLY and (
                index + 1 == len(kinds) or kinds[index + 1] is not ParamKind.POSITIONAL_ONLY
            )
            if is_last_positional_only:
                parts.append("/")
        text = "(" + ", ".join(parts) + ")"
        if self.returns:
            text += f" -> {self.returns}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"parameters": [p.as_dict() for p in self.parameters], "returns": self.returns}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Signature:
        return cls(tuple(Parameter.from_dict(p) for p in data["parameters"]), data.get("returns"))
