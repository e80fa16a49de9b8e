"""The one exception type that user-facing code turns into a readable message."""


class SdcInputError(ValueError):
    """Bad input from the user: a file, a column name or a parameter.

    The message is a single sentence meant to be shown as it is (CLI or UI), naming the file,
    column or parameter and what is wrong with it. It is a ``ValueError``, so code that catches
    ``ValueError`` catches it too.

    Parameters
    ----------
    message : str
        The one-line message.

    Examples
    --------
    >>> from sdc_core import SdcInputError, load_example, risk_profile
    >>> try:
    ...     risk_profile(load_example(), ["age", "sex"])
    ... except SdcInputError as err:
    ...     print(err)
    unknown quasi-identifier column(s): sex
    >>> issubclass(SdcInputError, ValueError)
    True
    """
