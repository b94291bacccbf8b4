"""Error types of the calculators: pure Python, no Django."""

from __future__ import annotations


class CalculatorError(ValueError):
    """A domain error raised by the maths: the inputs make no sense together.

    `fields` names the parameters involved (empty when no single one is to
    blame), so an adapter can show the message beside the right input.
    """

    def __init__(self, message: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.fields = tuple(fields)


class CalculatorInputError(ValueError):
    """Bad input for a calculator, every problem collected.

    `errors` maps a parameter name (or "__all__") to its messages, in the shape
    of the API's 400 body: {"errors": {"layers": ["Must be at least 1 layer."]}}.
    """

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = {name: list(messages) for name, messages in errors.items()}
        summary = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in self.errors.items())
        super().__init__(summary or "Invalid input.")
