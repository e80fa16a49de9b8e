"""The one exception type that user-facing code turns into a readable message."""


class SdcInputError(ValueError):
    """Bad input from the user: a file, a column name or a parameter.

    The message is a single sentence meant to be shown as it is (CLI or UI), naming the file,
    column or parameter and what is wrong with it.
    """
